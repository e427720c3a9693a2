internal import CRdKafka
import Logging
import OwnedThreads
import Synchronization

/// An idempotent producer (`enable.idempotence=true`, `acks=all`) whose `send` returns when the broker
/// acknowledged the record, i.e. when librdkafka's delivery report arrived.
///
/// Threads: a dedicated poll thread calls `rd_kafka_poll`, which runs the delivery-report callback;
/// `flush` and `close` run on one-shot threads of their own. Nothing blocks Swift's cooperative pool.
package final class KafkaProducer: Sendable {
    package struct Configuration: Sendable {
        /// `bootstrap.servers`.
        package var bootstrapServers: String
        /// How long each `rd_kafka_poll` waits for callbacks; bounds how fast `close` stops polling.
        /// Default: 100 ms.
        package var pollTimeout: Duration = .milliseconds(100)
        /// How long `send` waits between attempts while librdkafka's local queue is full. Default: 5 ms.
        package var queueFullBackoff: Duration = .milliseconds(5)
        /// Any librdkafka property, applied after the defaults (`enable.idempotence=true`, `acks=all`)
        /// and so able to override them. Default: empty.
        package var properties: [String: String] = [:]
        /// Called for global errors (brokers down, transport failures): librdkafka's error callback,
        /// on the poll thread; keep it short (count, flag). Failed deliveries are `send`'s outcomes,
        /// not reported here. Default: nil.
        package var onError: (@Sendable (KafkaError) -> Void)? = nil

        package init(bootstrapServers: String, properties: [String: String] = [:]) {
            self.bootstrapServers = bootstrapServers
            self.properties = properties
        }
    }

    private let handle: Mutex<RdKafkaHandle?>
    private let context: ProducerContext
    private let pollThread: Mutex<OwnedThread?>
    private let stopPolling: StopFlag
    private let configuration: Configuration
    private let logger: Logger

    package init(configuration: Configuration, logger: Logger = Logger(label: "kafka.producer")) throws(KafkaError) {
        let config = RdKafkaConfig()
        try config.set("bootstrap.servers", configuration.bootstrapServers)
        try config.set("enable.idempotence", "true")
        try config.set("acks", "all")
        try config.set(configuration.properties)
        let context = ProducerContext(logger: logger, onError: configuration.onError)
        config.withRaw { conf in
            rd_kafka_conf_set_dr_msg_cb(conf, deliveryReportTrampoline)
            rd_kafka_conf_set_error_cb(conf, producerErrorTrampoline)
        }
        let handle = try RdKafkaHandle.make(.producer, config: config, context: context)
        let stop = StopFlag()
        let timeout = Int32(configuration.pollTimeout.milliseconds)
        // The thread holds the handle, not the producer, so dropping the producer still ends it.
        let thread = OwnedThread.start(name: "kafka-produce") {
            while !stop.isSet {
                handle.withRaw { rk in _ = rd_kafka_poll(rk, timeout) }
            }
        }
        self.handle = Mutex(handle)
        self.context = context
        self.pollThread = Mutex(thread)
        self.stopPolling = stop
        self.configuration = configuration
        self.logger = logger
    }

    deinit {
        // Without close(): stop polling, then the handle's deinit destroys and fails what is left.
        stopPolling.set()
        if let thread = pollThread.withLock({ $0.take() }) {
            thread.join()
        }
    }

    /// Produces one record and returns where it landed once the broker acknowledged it.
    ///
    /// Retries locally while librdkafka's queue is full (until the task is cancelled); delivery failures
    /// (e.g. `message.timeout.ms` elapsed) throw with `isRetriable` set where trying again makes sense.
    /// - Parameter key: nil for no key (partitioner picks by round robin/sticky); records with the same
    ///   key go to the same partition.
    package func send(
        topic: String, key: [UInt8]?, value: [UInt8], headers: [(String, [UInt8])] = []
    ) async throws(KafkaError) -> KafkaDeliveryReport {
        // One record is a batch of one: the same produce, queue-full and delivery path.
        let outcomes = await send([Record(topic: topic, key: key, value: value, headers: headers)])
        guard let outcome = outcomes.first else { throw KafkaError.closed() }
        return try outcome.get()
    }

    /// One record of a ``send(_:)`` batch.
    package struct Record: Sendable {
        package var topic: String
        package var key: [UInt8]?
        package var value: [UInt8]
        package var headers: [(String, [UInt8])]

        package init(topic: String, key: [UInt8]?, value: [UInt8], headers: [(String, [UInt8])] = []) {
            self.topic = topic
            self.key = key
            self.value = value
            self.headers = headers
        }
    }

    /// Sends records and waits for all their delivery reports; one outcome per record, in order.
    ///
    /// The batch form of ``send(topic:key:value:headers:)`` for a worker answering a batch of jobs:
    /// one continuation per batch instead of a task and a continuation per record. A full local
    /// queue is waited out (records are never dropped for it); any other failure is that record's
    /// outcome, so the caller retries only what failed.
    package func send(_ records: [Record]) async -> [Result<KafkaDeliveryReport, KafkaError>] {
        if records.isEmpty { return [] }
        let batch = BatchDelivery(count: records.count)
        for (index, record) in records.enumerated() {
            while true {
                // A cancelled sender (a shutdown out of time) produces nothing more: its jobs go to
                // the next owner, which answers them once instead of twice.
                if Task.isCancelled {
                    batch.complete(index, .failure(KafkaError.deliveryWaitCancelled()))
                    break
                }
                let handle: RdKafkaHandle
                do { handle = try currentHandle() } catch {
                    batch.complete(index, .failure(error))
                    break
                }
                guard let error = enqueue(record, handle: handle, onDelivery: { batch.complete(index, $0) }) else { break }
                guard error.code == .queueFull, !Task.isCancelled else {
                    batch.complete(index, .failure(error))
                    break
                }
                // The poll thread is serving delivery reports; give it a moment to make room.
                try? await Task.sleep(for: configuration.queueFullBackoff)
            }
        }
        return await batch.wait()
    }

    /// Hands one record to librdkafka without waiting for the broker: nil once it took the record,
    /// after which `onDelivery` runs exactly once, on the poll thread, with the acknowledgement or
    /// the failure (keep it short: resume, count); else the reason it did not take the record (a
    /// full local queue included, not waited out), and `onDelivery` never runs.
    ///
    /// For a caller that already waits on something else (the edge waits for the reply, which
    /// cannot come before the record is acknowledged): no continuation per record.
    package func produce(_ record: Record, onDelivery: @escaping @Sendable (Result<KafkaDeliveryReport, KafkaError>) -> Void) -> KafkaError? {
        let handle: RdKafkaHandle
        do { handle = try currentHandle() } catch { return error }
        return enqueue(record, handle: handle, onDelivery: onDelivery)
    }

    /// One `rd_kafka_produceva` with a ``DeliveryBox`` as its opaque: nil once librdkafka took the
    /// record (its box completes exactly once, from the delivery report or after destroy), else why
    /// not, the box released and `onDelivery` never run.
    private func enqueue(
        _ record: Record, handle: RdKafkaHandle, onDelivery: @escaping @Sendable (Result<KafkaDeliveryReport, KafkaError>) -> Void
    ) -> KafkaError? {
        let box = DeliveryBox(topic: record.topic, completion: onDelivery)
        context.register(box)
        // +1 owned by librdkafka until the delivery report (or the context after destroy).
        let opaque = Unmanaged.passRetained(box).toOpaque()
        let error = handle.withRaw { rk in
            Self.produce(rk, topic: record.topic, key: record.key, value: record.value, headers: record.headers, opaque: opaque)
        }
        guard let error else { return nil }
        // librdkafka did not take the record: balance the passRetained here.
        Unmanaged<DeliveryBox>.fromOpaque(opaque).release()
        context.unregister(box)
        return error
    }

    /// Fetches metadata for `topics` now, so the first `send` to each does not pay for the lookup
    /// (and the idempotent producer's ID) while a request waits. Errors are returned, not thrown:
    /// a topic that does not exist yet is created or found on first send as usual.
    @discardableResult
    package func warmUp(topics: [String], timeout: Duration = .seconds(5)) async -> [String: KafkaError] {
        guard let handle = try? currentHandle() else { return [:] }
        let ms = Int32(timeout.milliseconds)
        return await OwnedThread.run(name: "kafka-warmup") {
            handle.withRaw { rk in
                var failures: [String: KafkaError] = [:]
                for name in topics {
                    guard let topic = rd_kafka_topic_new(rk, name, nil) else { continue }
                    defer { rd_kafka_topic_destroy(topic) }
                    var metadata: UnsafePointer<rd_kafka_metadata>?
                    let err = rd_kafka_metadata(rk, 0, topic, &metadata, ms)
                    if let metadata { rd_kafka_metadata_destroy(metadata) }
                    if err != RD_KAFKA_RESP_ERR_NO_ERROR { failures[name] = KafkaError(err, context: "metadata for \(name)") }
                }
                return failures
            }
        }
    }

    /// Waits until every queued record got its delivery report, or `timeout` passed (throws `.timedOut`).
    package func flush(timeout: Duration) async throws(KafkaError) {
        let handle = try currentHandle()
        let ms = Int32(timeout.milliseconds)
        let err = await OwnedThread.run(name: "kafka-flush") {
            handle.withRaw { rk in rd_kafka_flush(rk, ms) }
        }
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, context: "flush") }
    }

    /// Flushes (up to `timeout`), purges what is left (those `send`s throw `.purged`), stops the poll
    /// thread and destroys the client. Later calls throw `.closed`. Safe to call twice.
    package func close(timeout: Duration = .seconds(10)) async {
        guard let owner = self.handle.withLock({ $0.take() }).map(LastReference.init) else { return }
        let thread = pollThread.withLock { $0.take() }
        let stop = stopPolling
        let ms = Int32(timeout.milliseconds)
        let logger = self.logger
        await OwnedThread.run(name: "kafka-pclose") {
            owner.withValue { handle in
                handle.withRaw { rk in
                    if rd_kafka_flush(rk, ms) != RD_KAFKA_RESP_ERR_NO_ERROR {
                        logger.debug("kafka producer: flush timed out on close, purging", metadata: ["outq": "\(rd_kafka_outq_len(rk))"])
                        _ = rd_kafka_purge(rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT)
                        // Serve the purged records' delivery reports (each fails its `send`).
                        _ = rd_kafka_flush(rk, 1_000)
                    }
                }
            }
            stop.set()
            thread?.join()
            // Normally the last reference (a racing `send` may hold one briefly): destroys here.
            owner.drop()
        }
    }

    private func currentHandle() throws(KafkaError) -> RdKafkaHandle {
        guard let handle = handle.withLock({ $0 }) else { throw KafkaError.closed() }
        return handle
    }

    /// One `rd_kafka_produceva` call; librdkafka copies key, value and headers (`RD_KAFKA_MSG_F_COPY`),
    /// so every pointer only needs to live for the call.
    private static func produce(
        _ rk: OpaquePointer, topic: String, key: [UInt8]?, value: [UInt8], headers: [(String, [UInt8])],
        opaque: UnsafeMutableRawPointer
    ) -> KafkaError? {
        // Header names (NUL-terminated) and values laid end to end in one array that outlives the
        // call: one allocation per message instead of two per header.
        var headerBytes: [UInt8] = []
        var headerPlaces: [(name: Int, value: Int, count: Int)] = []
        if !headers.isEmpty {
            headerBytes.reserveCapacity(headers.reduce(0) { $0 + $1.0.utf8.count + 1 + $1.1.count })
            headerPlaces.reserveCapacity(headers.count)
            for (name, value) in headers {
                let nameStart = headerBytes.count
                headerBytes.append(contentsOf: name.utf8)
                headerBytes.append(0)
                headerPlaces.append((nameStart, headerBytes.count, value.count))
                headerBytes.append(contentsOf: value)
            }
        }

        return topic.withCString { topicPointer in
            headerBytes.withUnsafeBufferPointer { headerBuffer in
                value.withUnsafeBytes { valueBytes in
                    withOptionalBytes(key) { keyBytes in
                        var vus: [rd_kafka_vu_t] = []
                        vus.reserveCapacity(5 + headers.count)
                        var vu = rd_kafka_vu_t()
                        vu.vtype = RD_KAFKA_VTYPE_TOPIC
                        vu.u.cstr = topicPointer
                        vus.append(vu)

                        vu = rd_kafka_vu_t()
                        vu.vtype = RD_KAFKA_VTYPE_VALUE
                        vu.u.mem.ptr = UnsafeMutableRawPointer(mutating: valueBytes.baseAddress)
                        vu.u.mem.size = valueBytes.count
                        vus.append(vu)

                        if let keyBytes {
                            vu = rd_kafka_vu_t()
                            vu.vtype = RD_KAFKA_VTYPE_KEY
                            vu.u.mem.ptr = UnsafeMutableRawPointer(mutating: keyBytes.baseAddress)
                            vu.u.mem.size = keyBytes.count
                            vus.append(vu)
                        }

                        vu = rd_kafka_vu_t()
                        vu.vtype = RD_KAFKA_VTYPE_MSGFLAGS
                        vu.u.i = RD_KAFKA_MSG_F_COPY
                        vus.append(vu)

                        vu = rd_kafka_vu_t()
                        vu.vtype = RD_KAFKA_VTYPE_OPAQUE
                        vu.u.ptr = opaque
                        vus.append(vu)

                        if let base = headerBuffer.baseAddress {
                            for place in headerPlaces {
                                vu = rd_kafka_vu_t()
                                vu.vtype = RD_KAFKA_VTYPE_HEADER
                                vu.u.header.name = UnsafeRawPointer(base + place.name).assumingMemoryBound(to: CChar.self)
                                // librdkafka copies `size` bytes; an empty value still gets a valid pointer.
                                vu.u.header.val = UnsafeRawPointer(base + place.value)
                                vu.u.header.size = place.count
                                vus.append(vu)
                            }
                        }

                        let error = vus.withUnsafeBufferPointer { rd_kafka_produceva(rk, $0.baseAddress, $0.count) }
                        return error.map { KafkaError(consuming: $0, context: "produce to \(topic)") }
                    }
                }
            }
        }
    }
}

/// `nil` stays `nil`; an empty key still gets a (non-null) pointer so it stays distinct from no key.
private func withOptionalBytes<T>(_ bytes: [UInt8]?, _ body: (UnsafeRawBufferPointer?) -> T) -> T {
    guard let bytes else { return body(nil) }
    if bytes.isEmpty {
        var zero: UInt8 = 0
        return withUnsafeBytes(of: &zero) { body(UnsafeRawBufferPointer(rebasing: $0[0..<0])) }
    }
    return bytes.withUnsafeBytes { body($0) }
}

/// The per-message opaque: completes its record exactly once (a batch's slot, or a ``KafkaProducer/produce(_:onDelivery:)`` callback).
final class DeliveryBox: Sendable {
    let topic: String
    /// Taken once, on completion.
    private let completion: Mutex<(@Sendable (Result<KafkaDeliveryReport, KafkaError>) -> Void)?>

    init(topic: String, completion: @escaping @Sendable (Result<KafkaDeliveryReport, KafkaError>) -> Void) {
        self.topic = topic
        self.completion = Mutex(completion)
    }

    func complete(_ outcome: Result<KafkaDeliveryReport, KafkaError>) {
        if let completion = completion.withLock({ $0.take() }) { completion(outcome) }
    }
}

/// The delivery reports of one `send(_:)` batch: one continuation for the whole batch, resumed when
/// the last report arrives, instead of a task and a continuation per record.
final class BatchDelivery: Sendable {
    private struct State {
        var outcomes: [Result<KafkaDeliveryReport, KafkaError>?]
        var remaining: Int
        var continuation: CheckedContinuation<[Result<KafkaDeliveryReport, KafkaError>], Never>?

        /// Every record's outcome; read once `remaining` is 0, when each slot has been written.
        var reported: [Result<KafkaDeliveryReport, KafkaError>] {
            outcomes.map { outcome in
                guard let outcome else { preconditionFailure("a delivery outcome was read before it was reported") }
                return outcome
            }
        }
    }

    private let state: Mutex<State>

    init(count: Int) {
        state = Mutex(State(outcomes: Array(repeating: nil, count: count), remaining: count))
    }

    func complete(_ index: Int, _ result: Result<KafkaDeliveryReport, KafkaError>) {
        let done: (CheckedContinuation<[Result<KafkaDeliveryReport, KafkaError>], Never>, [Result<KafkaDeliveryReport, KafkaError>])? = state.withLock { s in
            guard s.outcomes[index] == nil else { return nil }
            s.outcomes[index] = result
            s.remaining -= 1
            guard s.remaining == 0, let continuation = s.continuation.take() else { return nil }
            return (continuation, s.reported)
        }
        if let (continuation, outcomes) = done { continuation.resume(returning: outcomes) }
    }

    /// Waits for every record's outcome (returns at once if all are in). Cancelling the task ends
    /// the wait: records still unreported fail with `.deliveryWaitCancelled` (a report that comes
    /// later is ignored), so a shutdown is not held by a partition whose leader is gone.
    func wait() async -> [Result<KafkaDeliveryReport, KafkaError>] {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready: [Result<KafkaDeliveryReport, KafkaError>]? = state.withLock { s in
                    if s.remaining == 0 { return s.reported }
                    s.continuation = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            giveUp()
        }
    }

    /// Fails every record still unreported; `complete` ignores their reports from now on.
    private func giveUp() {
        let cancelled = KafkaError.deliveryWaitCancelled()
        let indexes = state.withLock { s in s.outcomes.indices.filter { s.outcomes[$0] == nil } }
        for index in indexes { complete(index, .failure(cancelled)) }
    }
}

/// Producer callbacks' context; also remembers every record librdkafka holds, so that any it never
/// reported on (destroyed with records still queued) are failed and released after `rd_kafka_destroy`.
final class ProducerContext: RdKafkaContext, @unchecked Sendable {
    private let inFlight = Mutex<[ObjectIdentifier: DeliveryBox]>([:])
    private let onError: (@Sendable (KafkaError) -> Void)?

    init(logger: Logger, onError: (@Sendable (KafkaError) -> Void)?) {
        self.onError = onError
        super.init(logger: logger)
    }

    override func report(_ error: KafkaError) {
        onError?(error)
    }

    func register(_ box: DeliveryBox) {
        inFlight.withLock { $0[ObjectIdentifier(box)] = box }
    }

    func unregister(_ box: DeliveryBox) {
        inFlight.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(box)) }
    }

    override func didDestroy() {
        let leftovers = inFlight.withLock { state in
            defer { state.removeAll() }
            return Array(state.values)
        }
        for box in leftovers {
            box.complete(.failure(KafkaError.closed()))
            // Balances the passRetained whose delivery report never came.
            Unmanaged.passUnretained(box).release()
        }
    }
}

/// Runs on the poll thread (inside `rd_kafka_poll`/`rd_kafka_flush`).
private func deliveryReportTrampoline(_ rk: OpaquePointer?, _ message: UnsafePointer<rd_kafka_message_t>?, _ opaque: UnsafeMutableRawPointer?) {
    guard let message, let opaque, let privatePointer = message.pointee._private else { return }
    guard let context = RdKafkaContext.from(opaque) as? ProducerContext else {
        preconditionFailure("a delivery report reached a client whose context is not a producer's")
    }
    // Balances the passRetained in `send`.
    let box = Unmanaged<DeliveryBox>.fromOpaque(privatePointer).takeRetainedValue()
    context.unregister(box)
    let m = message.pointee
    if m.err == RD_KAFKA_RESP_ERR_NO_ERROR {
        box.complete(.success(KafkaDeliveryReport(topic: box.topic, partition: m.partition, offset: m.offset)))
    } else {
        box.complete(.failure(KafkaError(m.err, context: "delivery to \(box.topic)")))
    }
}

private func producerErrorTrampoline(_ rk: OpaquePointer?, _ err: Int32, _ reason: UnsafePointer<CChar>?, _ opaque: UnsafeMutableRawPointer?) {
    guard let opaque else { return }
    let context = RdKafkaContext.from(opaque)
    let text = reason.map { String(cString: $0) } ?? ""
    let error = KafkaError(code: KafkaError.Code(rawValue: err), message: "kafka: \(text)")
    context.logger.warning(
        "kafka producer error",
        metadata: [
            "rdkafka.error": "\(error.code)", "kind": "\(error.kind.rawValue)", "rdkafka.reason": "\(text)",
        ])
    context.report(error)
}

/// A one-way flag the poll threads read on every loop.
final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    func set() { value.store(true, ordering: .releasing) }
}
