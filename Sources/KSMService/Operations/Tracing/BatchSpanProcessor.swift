import DequeModule
import Foundation
import Logging
import ServiceLifecycle

/// OpenTelemetry's batch span processor: finished spans go into a bounded queue (``onEnd(_:)`` only
/// appends under a lock, so ending a span never blocks the cooperative pool), and a dedicated thread
/// exports them in batches of up to `maximumExportBatchSize`, every `scheduleDelay` or as soon as a
/// batch is full. Socket calls happen on that thread only.
///
/// A `Service`: `run()` starts the export thread; graceful shutdown flushes what is queued (bounded
/// by `shutdownFlushTimeout`) and stops it; cancellation stops it at once. Put it before the worker
/// in the `ServiceGroup` so it shuts down after the worker ended its last spans.
///
/// Spans ended before `run()` wait in the queue; spans ended after shutdown are dropped and counted.
/// Every loss is counted in ``statistics`` (`ksm_trace_spans_dropped_total`), never silent.
public final class BatchSpanProcessor: SpanProcessor, Service, @unchecked Sendable {
    // @unchecked: every mutable field is in `state`, read and written only while `condition` is locked.
    public let configuration: BatchSpanProcessorConfiguration
    public let statistics: TraceExportStatistics
    let exporter: any SpanExporter
    let logger: Logger
    private let condition = NSCondition()
    private var state: State

    private enum Phase { case idle, running, stopped }

    private struct State {
        var phase = Phase.idle
        var queue = Deque<RecordedSpan>()
        /// Spans ever accepted into the queue, and spans taken from it whose export finished: a flush
        /// of everything accepted so far is done when `handled` reaches the `enqueued` it saw.
        var enqueued = 0
        var handled = 0
        /// Export without waiting for the schedule until `handled` reaches this.
        var flushTarget = 0
        /// The earliest deadline of a flush in progress: exports meanwhile end by then.
        var flushDeadlines: [Int: ContinuousClock.Instant] = [:]
        var waiters: [Int: (target: Int, continuation: CheckedContinuation<Bool, Never>)] = [:]
        /// Waiters that timed out before they registered.
        var abandoned: Set<Int> = []
        var nextWaiterID = 0
        var errorLog: LogRateLimiter
        /// Batches lost in a row, for the "recovered" line.
        var failedBatches = 0
    }

    public init(exporter: any SpanExporter, configuration: BatchSpanProcessorConfiguration = .init(),
                statistics: TraceExportStatistics = TraceExportStatistics(), logger: Logger) {
        self.exporter = exporter
        self.configuration = configuration
        self.statistics = statistics
        self.logger = logger
        state = State(errorLog: LogRateLimiter(interval: configuration.errorLogInterval))
    }

    /// The counters with the current queue length, for `/metrics`.
    public var snapshot: TraceExportStatistics.Snapshot {
        var s = statistics.snapshot
        s.queued = locked { state.queue.count }
        return s
    }

    // MARK: SpanProcessor

    public func onEnd(_ span: RecordedSpan) {
        condition.lock()
        switch state.phase {
        case .stopped:
            condition.unlock()
            statistics.countDropped(1, .shutdown)
            return
        case .idle, .running:
            break
        }
        guard state.queue.count < configuration.maximumQueueSize else {
            condition.unlock()
            statistics.countDropped(1, .queueFull)
            return
        }
        state.queue.append(span)
        state.enqueued += 1
        // Wake the thread only when a batch is ready; otherwise the schedule picks the span up.
        if state.queue.count == configuration.effectiveBatchSize { condition.signal() }
        condition.unlock()
    }

    public func forceFlush() {
        condition.lock()
        state.flushTarget = max(state.flushTarget, state.enqueued)
        condition.signal()
        condition.unlock()
    }

    public func flush(timeout: Duration) async -> Bool {
        let id: Int = locked {
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in self.register(id, timeout: timeout, continuation) }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                self.abandon(id)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    private func register(_ id: Int, timeout: Duration, _ continuation: CheckedContinuation<Bool, Never>) {
        condition.lock()
        if state.abandoned.remove(id) != nil {
            condition.unlock()
            continuation.resume(returning: false)
            return
        }
        let target = state.enqueued
        if state.handled >= target {
            condition.unlock()
            continuation.resume(returning: true)
            return
        }
        if state.phase == .stopped {
            condition.unlock()
            continuation.resume(returning: false)
            return
        }
        state.waiters[id] = (target, continuation)
        state.flushTarget = max(state.flushTarget, target)
        state.flushDeadlines[id] = .now + timeout
        condition.signal()
        condition.unlock()
    }

    /// The flush's time is up: resume its waiter with false, or remember the ID if it has not
    /// registered yet (the sleeper may win the race).
    private func abandon(_ id: Int) {
        condition.lock()
        state.flushDeadlines[id] = nil
        let waiter = state.waiters.removeValue(forKey: id)
        if waiter == nil { state.abandoned.insert(id) }
        condition.unlock()
        waiter?.continuation.resume(returning: false)
    }

    // MARK: Service

    public func run() async throws {
        let started: Bool = locked {
            guard state.phase == .idle else { return false }
            state.phase = .running
            return true
        }
        guard started else { return }
        let done = AsyncStream<Void>.makeStream()
        let thread = Thread { [self] in
            exportLoop()
            done.continuation.finish()
        }
        thread.name = "ksm-trace-export"
        thread.start()
        do {
            try await gracefulShutdown()
        } catch {
            // Cancelled: stop now; an export in flight ends by its own deadline.
            stop()
            return
        }
        let flushed = await flush(timeout: configuration.shutdownFlushTimeout)
        stop()
        for await _ in done.stream {}
        let s = statistics.snapshot
        logger.info("trace export stopped", metadata: [
            "flushed": "\(flushed)", "exported": "\(s.exported)", "dropped": "\(s.dropped.values.reduce(0, +))",
        ])
    }

    /// Stops the export thread after its current batch; drops (and counts) what is still queued and
    /// fails every flush still waiting.
    private func stop() {
        condition.lock()
        state.phase = .stopped
        let left = state.queue.count
        _ = state.queue.popFirst(left)
        let waiters = state.waiters.values.map(\.continuation)
        state.waiters.removeAll()
        state.flushDeadlines.removeAll()
        condition.signal()
        condition.unlock()
        statistics.countDropped(left, .shutdown)
        for waiter in waiters { waiter.resume(returning: false) }
    }

    // MARK: The export thread

    private func exportLoop() {
        var nextScheduled = ContinuousClock.now + configuration.scheduleDelay
        let batchSize = configuration.effectiveBatchSize
        while true {
            condition.lock()
            while state.phase == .running, state.queue.count < batchSize, state.handled >= state.flushTarget {
                let wait = nextScheduled - .now
                if wait <= .zero { break }
                _ = condition.wait(until: Date(timeIntervalSinceNow: wait.seconds))
            }
            guard state.phase == .running else {
                condition.unlock()
                return
            }
            let batch = state.queue.popFirst(batchSize)
            var deadline = ContinuousClock.now + configuration.exportTimeout
            if let flushDeadline = state.flushDeadlines.values.min() { deadline = min(deadline, flushDeadline) }
            condition.unlock()

            // The schedule restarts when a scheduled (not a full or flushed) batch went out.
            if batch.count < batchSize { nextScheduled = ContinuousClock.now + configuration.scheduleDelay }
            if !batch.isEmpty { export(batch, deadline: deadline) }

            condition.lock()
            state.handled += batch.count
            var done: [CheckedContinuation<Bool, Never>] = []
            for (id, waiter) in state.waiters where waiter.target <= state.handled {
                done.append(waiter.continuation)
                state.waiters[id] = nil
                state.flushDeadlines[id] = nil
            }
            condition.unlock()
            for continuation in done { continuation.resume(returning: true) }
        }
    }

    private func export(_ batch: [RecordedSpan], deadline: ContinuousClock.Instant) {
        let outcome = exporter.export(batch, deadline: deadline)
        statistics.countExported(outcome.accepted)
        statistics.countDropped(outcome.lost, outcome.isPartialSuccess ? .rejected : .exportFailed)
        for failure in outcome.failedAttempts { statistics.countError(failure.code) }
        // A batch that went through after a retry is counted (ksm_trace_export_errors_total), not logged as lost.
        let failed = outcome.lost > 0
        let (logNow, recovered): (Int?, Int?) = locked {
            if failed {
                state.failedBatches += 1
                return (state.errorLog.shouldLog(), nil)
            }
            defer {
                state.failedBatches = 0
                state.errorLog.reset()
            }
            return (nil, state.failedBatches > 0 ? state.failedBatches : nil)
        }
        if let suppressed = logNow {
            var metadata: Logger.Metadata = [
                "spans": "\(batch.count)", "lost": "\(outcome.lost)", "attempts": "\(outcome.failedAttempts.count)",
                "suppressed": "\(suppressed)",
            ]
            if let last = outcome.failedAttempts.last { metadata["error"] = "\(last)" }
            logger.warning(outcome.isPartialSuccess ? "trace collector rejected spans" : "trace export failed", metadata: metadata)
        } else if !failed, let last = outcome.failedAttempts.last {
            logger.debug("trace export went through after retries", metadata: ["attempts": "\(outcome.failedAttempts.count + 1)", "error": "\(last)"])
        }
        if let recovered {
            logger.info("trace export recovered", metadata: ["failed_batches": "\(recovered)"])
        }
    }

    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }
}
