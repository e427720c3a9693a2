@testable import KSMService
import Testing

@Suite struct TraceSamplerTests {
    private let parentSampled = TraceContext(traceID: TraceID(high: 1, low: 1), spanID: SpanID(1), isSampled: true, isRemote: true)
    private let parentUnsampled = TraceContext(traceID: TraceID(high: 1, low: 1), spanID: SpanID(1), isSampled: false, isRemote: true)

    @Test("Parent-based: a parent's sampled flag decides, whatever the root ratio")
    func parentDecides() {
        for ratio in [0.0, 0.5, 1.0] {
            let sampler = TraceSampler.parentBased(rootRatio: ratio)
            #expect(sampler.shouldSample(parent: parentSampled, traceID: parentSampled.traceID))
            #expect(!sampler.shouldSample(parent: parentUnsampled, traceID: parentUnsampled.traceID))
        }
    }

    @Test("Root spans: ratio 1 keeps all, ratio 0 none; the decision is the trace ID's low 56 bits against (1 - ratio) x 2^56")
    func rootRatio() {
        let all = TraceSampler.parentBased(rootRatio: 1), none = TraceSampler.parentBased(rootRatio: 0)
        for low: UInt64 in [0, 1, 1 << 55, (1 << 56) - 1, .max] {
            #expect(all.shouldSample(parent: nil, traceID: TraceID(high: 7, low: low)))
            #expect(!none.shouldSample(parent: nil, traceID: TraceID(high: 7, low: low)))
        }
        let quarter = TraceSampler.parentBased(rootRatio: 0.25)
        let threshold: UInt64 = 3 << 54  // 0.75 x 2^56
        #expect(quarter.rejectionThreshold == threshold)
        #expect(!quarter.shouldSample(parent: nil, traceID: TraceID(high: 0, low: threshold - 1)))
        #expect(quarter.shouldSample(parent: nil, traceID: TraceID(high: 0, low: threshold)))
        // The top byte of the low half and the whole high half do not count.
        #expect(!quarter.shouldSample(parent: nil, traceID: TraceID(high: .max, low: 0xFF00_0000_0000_0000)))
        // Out-of-range ratios are clamped (configuration refuses them before this).
        #expect(TraceSampler.parentBased(rootRatio: 7).rootRatio == 1)
        #expect(TraceSampler.parentBased(rootRatio: -1).rootRatio == 0)
        #expect(TraceSampler.parentBased(rootRatio: .nan).rootRatio == 1)
    }

    @Test("Root ratio 0.25 over random trace IDs keeps about a quarter; the tracer records only those")
    func ratioStatistics() {
        let processor = CollectingProcessor()
        let tracer = OTelTracer(sampler: .parentBased(rootRatio: 0.25), processor: processor)
        let n = 20_000
        var sampled = 0
        for _ in 0..<n {
            let span = tracer.startSpan("root", context: .topLevel)
            if span.isRecording { sampled += 1 }
            #expect(span.context.traceContext?.isSampled == span.isRecording)
            span.end()
        }
        #expect((0.23...0.27).contains(Double(sampled) / Double(n)), "\(sampled) of \(n)")
        #expect(processor.ended.count == sampled)
    }
}
