import Licensing

/// Prometheus text for the rotation prefetcher, appended to the worker's
/// `/metrics` body beside ``WorkerMetrics`` (kept apart so the two evolve without conflicts).
public enum RotationMetrics {
    /// The store cache's counters are rendered by ``WorkerMetrics`` (`ksm_cache_reads_total`).
    public static func render(_ s: RotationStatus.Snapshot) -> String {
        var out = ""
        func metric(_ name: String, _ type: String, _ help: String, _ value: Int) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n\(name) \(value)\n"
        }
        metric("ksm_expected_rotation_load", "gauge",
               "License requests expected at key-rotation boundaries within the prefetch lead time (live viewers x keys due).", s.expectedLoad)
        metric("ksm_rotation_schedules_due", "gauge", "Rotation schedules with a boundary within the lead time.", s.dueSchedules)
        metric("ksm_rotation_keys_prefetched_total", "counter", "Next-period keys read ahead of their boundary.", s.keysPrefetched)
        metric("ksm_rotation_prefetch_failures_total", "counter", "Prefetch passes that failed (Redis unavailable).", s.failedPasses)
        return out
    }
}
