import Foundation
import Kafka
import Licensing
import Logging
import Synchronization
import Testing

@testable import KSMOperations
@testable import KSMService

/// The pieces of `/metrics`, the JSON log format and trace propagation, without Kafka or Redis.
@Suite struct OperationsTests {
    @Test("Histogram buckets are cumulative, +Inf counts everything, sum and count add up")
    func histogram() {
        var h = LatencyHistogram()
        h.observe(seconds: 0.004)
        h.observe(seconds: 0.3)
        h.observe(.seconds(100))
        var other = LatencyHistogram()
        other.observe(.milliseconds(20))
        h.merge(other)
        let cumulative = Dictionary(uniqueKeysWithValues: h.cumulative.map { ($0.le, $0.count) })
        #expect(cumulative["0.005"] == 1)
        #expect(cumulative["0.025"] == 2)
        #expect(cumulative["0.5"] == 3)
        #expect(cumulative["30"] == 3)
        #expect(cumulative["+Inf"] == 4)
        #expect(h.count == 4)
        #expect(abs(h.sum - 100.324) < 1e-9)
    }

    @Test("An edge's answer in tens of milliseconds reads apart from one near 100 ms; a job alone reads below 5 ms")
    func histogramResolvesAnEdgesLatency() {
        var h = LatencyHistogram()
        h.observe(.milliseconds(55))
        h.observe(.milliseconds(95))
        h.observe(.microseconds(800))
        h.observe(.microseconds(2_000))
        let cumulative = Dictionary(uniqueKeysWithValues: h.cumulative.map { ($0.le, $0.count) })
        #expect(cumulative["0.001"] == 1)
        #expect(cumulative["0.0025"] == 2)
        #expect(cumulative["0.05"] == 2)
        #expect(cumulative["0.075"] == 3)
        #expect(cumulative["0.1"] == 4)
    }

    @Test("The tenant label admits the first N known tenants, then says other; no tenant or an unknown one is unknown and takes no slot")
    func tenantLabels() {
        var labels = TenantLabels(limit: 2)
        #expect(labels.label(for: "typo", isKnown: false) == TenantLabels.unknown)
        #expect(labels.label(for: "a") == "a")
        #expect(labels.label(for: "b") == "b")
        #expect(labels.label(for: "c") == TenantLabels.other)
        #expect(labels.label(for: "a") == "a")
        #expect(labels.label(for: "") == "unknown")
    }

    @Test("Publishing: reply series by status/tenant/class, histograms per class, lag, cache, slots, escaped labels, HELP for every family")
    func render() {
        var s = WorkerStatistics.Snapshot()
        s.replies[.init(status: "noErr", tenant: "ac\"me", priority: "continuity")] = 3
        var h = LatencyHistogram()
        h.observe(seconds: 0.2)
        s.endToEndLatency["continuity"] = h
        s.queuedByClass["prefetch"] = 7
        s.storeErrors[.init(operation: "fetch", code: "unavailable")] = 2
        let cache = CacheStatistics()
        let text = prometheusText(
            .init(
                statistics: s, storeUp: true, stalled: false,
                lag: [TopicPartition(topic: "req", partition: 3): 42], cache: cache,
                slots: .init(slots: 5, accounts: 4, isComplete: true), process: ProcessSample.read()),
            version: "1.2.3")
        #expect(text.contains(#"ksm_replies_by_tenant_total{status="noErr",tenant="ac\"me",class="continuity"} 3"#), "\(text)")
        #expect(text.contains(#"ksm_job_latency_seconds_bucket{class="continuity",le="0.25"} 1"#))
        #expect(text.contains(#"ksm_job_latency_seconds_bucket{class="continuity",le="0.1"} 0"#))
        #expect(text.contains(#"ksm_job_latency_seconds_count{class="prefetch"} 0"#))
        #expect(text.contains(#"ksm_jobs_queued{class="prefetch"} 7.0"#))
        #expect(text.contains(#"ksm_jobs_queued{class="new"} 0.0"#))
        #expect(text.contains(#"ksm_store_errors_total{operation="fetch",code="unavailable"} 2"#))
        #expect(text.contains(#"ksm_consumer_lag{topic="req",partition="3"} 42.0"#))
        #expect(text.contains(#"ksm_cache_reads_total{result="join"} 0"#))
        #expect(text.contains("ksm_lease_slots_in_use 5.0"))
        #expect(text.contains(#"ksm_build_info{version="1.2.3"} 1.0"#))
        #expect(text.contains(#"ksm_kafka_errors_total{source="producer",kind="message_too_large"} 0"#))
        for name in ["process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds", "process_start_time_seconds"] {
            #expect(text.contains("\n\(name) "), "\(name)")
        }
        // The latency alert's 2 s target is a bucket bound, and so is 1.5 s.
        #expect(text.contains(#"ksm_job_latency_seconds_bucket{class="new",le="1.5"} 0"#))
        #expect(text.contains(#"ksm_job_latency_seconds_bucket{class="new",le="2.0"} 0"#))
        // Every sample line belongs to a declared metric family, and every family has help text.
        let lines = text.split(separator: "\n")
        let families = Set(lines.filter { $0.hasPrefix("# TYPE ") }.map { $0.split(separator: " ")[2] })
        let described = Set(lines.filter { $0.hasPrefix("# HELP ") }.map { $0.split(separator: " ")[2] })
        #expect(families == described)
        for line in lines where !line.hasPrefix("#") {
            let name = line.prefix { $0 != "{" && $0 != " " }
            let family = ["_bucket", "_sum", "_count"].reduce(Substring(name)) { n, suffix in
                families.contains(n) ? n : (n.hasSuffix(suffix) ? n.dropLast(suffix.count) : n)
            }
            #expect(families.contains(family), "\(line)")
        }
    }

    @Test("Cache statistics count hits, misses and single-flight joins")
    func cacheStatistics() async throws {
        // A TTL no stall of a loaded CI host outlasts: the second fetch is a hit, not a second miss.
        let memory = InMemoryLicenseStore()
        // A known tenant: an unknown one is never kept (CachingLicenseStoreTests).
        try await memory.putTenant(TenantRecord(id: try StoreIdentifier("t"), keyEncryptionKeyID: try StoreIdentifier("k")))
        let store = CachingLicenseStore(memory, timeToLive: .seconds(600))
        let request = StoreRequest(tenant: try StoreIdentifier("t"), account: try StoreIdentifier("a"), assetID: Array("x".utf8))
        _ = try await store.fetch([request])
        _ = try await store.fetch([request])
        #expect(store.statistics.misses == 1)
        #expect(store.statistics.hits == 1)
    }

    @Test("JSON logs: one object per line, fps keys renamed, strings escaped, metadata cannot replace fields")
    func jsonLogs() throws {
        let lines = Mutex<[String]>([])
        var handler = JSONLogHandler(label: "ksm.test", output: JSONLogOutput { line in lines.withLock { $0.append(line) } })
        handler.logLevel = .debug
        let logger = Logger(label: "ksm.test") { _ in handler }
        logger.debug("answered \"x\"\n", metadata: [LoggingKeys.requestID: "r-1", LoggingKeys.tenant: "acme", "message": "spoof", "n": .array(["1"])])
        logger.trace("dropped")
        let written = lines.withLock { $0 }
        #expect(written.count == 1)
        let line = try #require(written.first)
        #expect(line.hasSuffix("}\n"))
        #expect(line.dropLast().contains("\n") == false)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["message"] as? String == "answered \"x\"\n")
        #expect(object["request_id"] as? String == "r-1")
        #expect(object["tenant"] as? String == "acme")
        #expect(object["level"] as? String == "debug")
        #expect(object["label"] as? String == "ksm.test")
        #expect(object["n"] as? [String] == ["1"])
        let timestamp = try #require(object["timestamp"] as? String)
        #expect(timestamp.count == 24 && timestamp.hasSuffix("Z"))
    }

    @Test("traceparent: valid ones pass through with tracestate, malformed ones do not")
    func traceparent() {
        let valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        #expect(JobTracing.isValidTraceparent(Array(valid.utf8)))
        for bad in [
            "", "junk", valid.uppercased(), "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "ff" + valid.dropFirst(2), valid + "-x",
        ] {
            #expect(!JobTracing.isValidTraceparent(Array(bad.utf8)), "\(bad)")
        }
        #expect(JobTracing.isValidTraceparent(Array(("01" + valid.dropFirst(2) + "-future").utf8)))
        let headers: [(String, [UInt8])] = [("correlation-id", [1]), ("traceparent", Array(valid.utf8)), ("tracestate", Array("a=1".utf8))]
        let out = JobTracing.passThrough(headers)
        #expect(out.map(\.0) == ["traceparent", "tracestate"])
        #expect(JobTracing.passThrough([("traceparent", Array("junk".utf8)), ("tracestate", [0x61])]).isEmpty)
    }
}
