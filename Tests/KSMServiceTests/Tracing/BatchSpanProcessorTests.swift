@testable import KSMService
import Logging
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

@Suite(.timeLimit(.minutes(1))) struct BatchSpanProcessorTests {
    private func processor(_ exporter: RecordingExporter, queue: Int = 2048, batch: Int = 512, delay: Duration = .seconds(60)) -> BatchSpanProcessor {
        var configuration = BatchSpanProcessorConfiguration()
        configuration.maximumQueueSize = queue
        configuration.maximumExportBatchSize = batch
        configuration.scheduleDelay = delay
        configuration.shutdownFlushTimeout = .seconds(20)
        return BatchSpanProcessor(exporter: exporter, configuration: configuration, logger: Logger(label: "test"))
    }

    /// Runs the processor as a service inside `body`, then shuts it down gracefully.
    private func running(_ processor: BatchSpanProcessor, _ body: () async throws -> Void) async throws {
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await processor.run() }
                try await body()
                trigger.triggerGracefulShutdown()
                try await group.waitForAll()
            }
        }
    }

    @Test("A full queue drops new spans and counts them; what was queued is exported by the shutdown flush")
    func queueOverflow() async throws {
        let exporter = RecordingExporter()
        let processor = processor(exporter, queue: 4, batch: 4)
        // Not running yet: spans wait in the queue.
        for n in 0..<10 { processor.onEnd(TracingFixtures.span("s\(n)")) }
        #expect(processor.snapshot.queued == 4)
        #expect(processor.snapshot.dropped["queue_full"] == 6)
        try await running(processor) {
            #expect(await TracingFixtures.eventually { exporter.exportedNames.count == 4 })
        }
        #expect(exporter.exportedNames == ["s0", "s1", "s2", "s3"])
        let s = processor.snapshot
        #expect(s.exported == 4 && s.queued == 0)
        #expect(s.dropped == ["queue_full": 6, "export_failed": 0, "rejected": 0, "shutdown": 0])
        // After shutdown, a span is dropped as such.
        processor.onEnd(TracingFixtures.span("late"))
        #expect(processor.snapshot.dropped["shutdown"] == 1)
    }

    @Test("A full batch is exported at once, long before the schedule; a partial one waits for it or a flush")
    func fullBatchBeforeDelay() async throws {
        let exporter = RecordingExporter()
        let processor = processor(exporter, batch: 3, delay: .seconds(60))
        try await running(processor) {
            // Let the export thread start and go to sleep on its 60 s schedule: only a full batch wakes it.
            try await Task.sleep(for: .milliseconds(200))
            let start = ContinuousClock.now
            for n in 0..<3 { processor.onEnd(TracingFixtures.span("full\(n)")) }
            // Generous bounds for a loaded CI host, still far below the 60 s schedule.
            #expect(await TracingFixtures.eventually(timeout: .seconds(20)) { exporter.batches.count == 1 })
            #expect(ContinuousClock.now - start < .seconds(30))
            #expect(exporter.batches.first?.map(\.name) == ["full0", "full1", "full2"])
            processor.onEnd(TracingFixtures.span("partial"))
            try await Task.sleep(for: .milliseconds(300))
            #expect(exporter.batches.count == 1, "a partial batch went out before the 60 s schedule")
            #expect(await processor.flush(timeout: .seconds(20)))
            #expect(exporter.batches.count == 2)
            #expect(exporter.batches.last?.map(\.name) == ["partial"])
        }
    }

    @Test("The schedule exports a partial batch after scheduleDelay")
    func scheduleDelay() async throws {
        let exporter = RecordingExporter()
        let processor = processor(exporter, batch: 512, delay: .milliseconds(200))
        try await running(processor) {
            // Let the first scheduled wake-up pass with an empty queue.
            try await Task.sleep(for: .milliseconds(250))
            let ended = ContinuousClock.now
            processor.onEnd(TracingFixtures.span("one"))
            // Nothing but the schedule can send it (no full batch, no flush); the bound allows a loaded host.
            #expect(await TracingFixtures.eventually(timeout: .seconds(20)) { exporter.batches.count == 1 })
            #expect(ContinuousClock.now - ended < .seconds(20))
        }
    }

    @Test("A failed export drops its batch and counts the spans and every failed attempt; forceFlush ships without waiting")
    func failedExportCounted() async throws {
        let exporter = RecordingExporter { spans in
            SpanExportOutcome(accepted: 0, lost: spans.count, failedAttempts: [
                TraceExportError(.connection, "refused", isRetriable: true), TraceExportError(.httpStatus, "503", status: 503, isRetriable: true),
            ])
        }
        let processor = processor(exporter, batch: 10)
        try await running(processor) {
            for n in 0..<5 { processor.onEnd(TracingFixtures.span("f\(n)")) }
            OTelTracer(processor: processor).forceFlush()
            #expect(await TracingFixtures.eventually { exporter.batches.count == 1 })
            #expect(await TracingFixtures.eventually { processor.snapshot.dropped["export_failed"] == 5 })
        }
        let s = processor.snapshot
        #expect(s.exported == 0)
        #expect(s.exportErrors == ["connection": 1, "http": 1, "protocol": 0, "timeout": 0])
        let metrics = prometheusText(.init(statistics: WorkerStatistics().snapshot, storeUp: true, stalled: false, tracing: s))
        #expect(metrics.contains("ksm_trace_spans_dropped_total{reason=\"export_failed\"} 5"))
        #expect(metrics.contains("ksm_trace_export_errors_total{reason=\"connection\"} 1"))
        #expect(metrics.contains("ksm_trace_spans_exported_total 0"))
        #expect(metrics.contains("ksm_trace_spans_queued 0.0"))
    }

    @Test("flush(timeout:) returns false when the export outlasts it, and true once everything before it is handled")
    func flushTimeout() async throws {
        // The export blocks until the gate opens, so the first flush cannot win however the host schedules.
        let exporter = RecordingExporter(gated: true)
        let processor = processor(exporter, batch: 10)
        try await running(processor) {
            processor.onEnd(TracingFixtures.span("slow"))
            #expect(await processor.flush(timeout: .milliseconds(100)) == false)
            #expect(exporter.batches.isEmpty)
            exporter.openGate()
            #expect(await processor.flush(timeout: .seconds(20)))
            #expect(exporter.exportedNames == ["slow"])
        }
    }

    @Test("Rate-limited error log: the first at once, then one per interval with the count folded in")
    func logRateLimiter() {
        var limiter = LogRateLimiter(interval: .seconds(60))
        let t0 = ContinuousClock.now
        #expect(limiter.shouldLog(now: t0) == 0)
        #expect(limiter.shouldLog(now: t0 + .seconds(1)) == nil)
        #expect(limiter.shouldLog(now: t0 + .seconds(59)) == nil)
        #expect(limiter.shouldLog(now: t0 + .seconds(61)) == 2)
        limiter.reset()
        #expect(limiter.shouldLog(now: t0 + .seconds(62)) == 0)
    }
}
