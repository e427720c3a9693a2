/// Which spans are recorded: parent-based, with a ratio for root spans (OpenTelemetry's
/// `parentbased_traceidratio`, the ratio being `OTEL_TRACES_SAMPLER_ARG`).
///
/// A span whose parent came with a `traceparent` follows the parent's `sampled` flag, so a trace is
/// recorded whole or not at all across the edge and the KSM. A root span (a job without a valid
/// `traceparent`) is recorded when its trace ID falls under the ratio, decided from the trace ID
/// alone as OpenTelemetry's `TraceIdRatioBased` does: the last 7 bytes (56 bits, the part W3C
/// Trace Context level 2 makes random) compared with a threshold, so every process that applies the
/// same ratio to the same trace takes the same decision.
public struct TraceSampler: Sendable, Hashable {
    /// The fraction of root traces recorded, in 0...1.
    public let rootRatio: Double
    /// Root traces whose low 56 bits are at or above this are recorded: (1 - ratio) x 2^56.
    let rejectionThreshold: UInt64

    private static let randomBits: UInt64 = 1 << 56

    /// - Parameter rootRatio: clamped to 0...1; NaN counts as 1 (callers validate configuration
    ///   first: ``OTLPTracingConfiguration`` refuses such values).
    public static func parentBased(rootRatio: Double) -> TraceSampler {
        TraceSampler(rootRatio: rootRatio.isNaN ? 1 : min(1, max(0, rootRatio)))
    }

    /// Every root span recorded; parents still decide for their children. The default.
    public static let parentBasedAlwaysOn = parentBased(rootRatio: 1)

    private init(rootRatio: Double) {
        self.rootRatio = rootRatio
        // Exact at both ends: ratio 1 gives 0 (everything passes), ratio 0 gives 2^56 (nothing does).
        rejectionThreshold = UInt64(((1 - rootRatio) * Double(Self.randomBits)).rounded())
    }

    /// True when a span of `traceID` whose parent context is `parent` (nil for a root span) is recorded.
    public func shouldSample(parent: TraceContext?, traceID: TraceID) -> Bool {
        if let parent { return parent.isSampled }
        return traceID.low & (Self.randomBits - 1) >= rejectionThreshold
    }
}
