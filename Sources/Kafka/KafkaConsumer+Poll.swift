internal import CRdKafka
import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension KafkaConsumer {
    /// The poll thread's whole life: poll until asked to stop, then leave the group and end `events`.
    static func pollLoop(
        handle: RdKafkaHandle, state: ConsumerState, timeout: Int32,
        onStall: (@Sendable (Watchdog.Stall) -> Void)?, logger: Logger
    ) {
        handle.withRaw { rk in
            while !state.stop.isSet {
                // While backpressure holds fetching, poll briefly so the resume follows the drain closely.
                let paused = applyBackpressure(rk, state: state, logger: logger)
                pollOnce(rk, state: state, timeout: paused ? min(timeout, 10) : timeout)
                if let stall = state.watchdog?.checkOnce() {
                    logger.debug("kafka consumer: processing stalled", metadata: ["stall": "\(stall)"])
                    onStall?(stall)
                }
            }
            // librdkafka before 2.2.1 aborts in rd_kafka_destroy when a cooperative-sticky member never
            // completed a rebalance (confluentinc/librdkafka#4312): give the first one time to happen.
            let deadline = ContinuousClock.now + firstRebalanceGrace
            while !state.hasJoined, ContinuousClock.now < deadline {
                pollOnce(rk, state: state, timeout: min(timeout, 50))
            }
            let close = state.beginClosing()
            let err = rd_kafka_consumer_close(rk)
            if err != RD_KAFKA_RESP_ERR_NO_ERROR {
                state.enqueue(.error(KafkaError(err, context: "consumer close")))
            }
            if close == .leaveGroupAndAbandonClient {
                logger.debug("kafka consumer: closed before its first rebalance; leaking the client instead of crashing")
                handle.abandonInsteadOfDestroying()
            }
        }
        state.finish()
    }

    /// The lag thread's whole life: sample every `interval` until the consumer stops. A thread of its
    /// own because the broker query blocks (up to 1 s), and neither the poll thread (rebalances,
    /// heartbeats) nor the cooperative pool should wait for it. `rd_kafka_t` is thread-safe.
    static func lagLoop(handle: RdKafkaHandle, state: ConsumerState, interval: Duration) {
        while !state.stop.isSet {
            handle.withRaw { rk in sampleLag(rk, state: state) }
            let next = ContinuousClock.now + interval
            while !state.stop.isSet, ContinuousClock.now < next { usleep(50_000) }
        }
    }

    /// Lag per assigned partition: the broker's high watermark (`rd_kafka_query_watermark_offsets`,
    /// asked of the broker, so it stays true while fetching is paused for backpressure, when the
    /// locally cached watermark would freeze) minus this member's fetch position (`rd_kafka_position`,
    /// local). A partition whose watermark could not be read within 1 s is left out of this sample.
    static func sampleLag(_ rk: OpaquePointer, state: ConsumerState) {
        let assigned = state.partitionsToSample
        var lag: [TopicPartition: Int64] = [:]
        if !assigned.isEmpty {
            let list = RdKafkaTopicPartitionList(assigned)
            if rd_kafka_position(rk, list.raw) == RD_KAFKA_RESP_ERR_NO_ERROR {
                for (partition, position) in list.partitionsWithOffsets {
                    var low: Int64 = -1
                    var high: Int64 = -1
                    let err = partition.topic.withCString { rd_kafka_query_watermark_offsets(rk, $0, partition.partition, &low, &high, 1000) }
                    guard err == RD_KAFKA_RESP_ERR_NO_ERROR, high >= 0 else { continue }
                    // No position yet (nothing fetched since assignment): everything from the low mark counts.
                    let from = position >= 0 ? position : max(low, 0)
                    lag[partition] = max(0, high - from)
                }
            }
        }
        // The assignment may have changed during the queries: only partitions still owned are kept.
        state.recordLag(lag)
    }

    /// How long close() keeps polling for a first rebalance before leaving (see `pollLoop`).
    static let firstRebalanceGrace: Duration = .seconds(10)

    private static func pollOnce(_ rk: OpaquePointer, state: ConsumerState, timeout: Int32) {
        if let message = rd_kafka_consumer_poll(rk, timeout) {
            let event = event(from: message)
            rd_kafka_message_destroy(message)
            if let event { state.enqueue(event) }
        }
    }

    /// Pauses the whole assignment when `capacity` messages wait, resumes it (minus what the user
    /// paused) at half; polling goes on either way so rebalances are still served. Returns whether
    /// fetching is held back.
    @discardableResult
    private static func applyBackpressure(_ rk: OpaquePointer, state: ConsumerState, logger: Logger) -> Bool {
        do {
            let refused = try state.changeFetching(rk) { $0.applyBackpressure() }
            if !refused.isEmpty {
                // Only partitions librdkafka holds no state for (revoked meanwhile): nothing to fetch there.
                logger.debug("kafka consumer: backpressure pause/resume refused", metadata: ["refused": "\(refused.keys.map(\.description).sorted())"])
            }
        } catch {
            logger.debug("kafka consumer: backpressure pause/resume failed", metadata: ["error": "\(error)"])
        }
        // Only this thread changes backpressure, so reading it after the transition is exact.
        return state.isHoldingBack
    }

    /// Copies the message out of librdkafka (the caller destroys it). nil for events not worth surfacing.
    static func event(from pointer: UnsafeMutablePointer<rd_kafka_message_t>) -> Event? {
        let m = pointer.pointee
        guard m.err == RD_KAFKA_RESP_ERR_NO_ERROR else {
            if m.err == RD_KAFKA_RESP_ERR__PARTITION_EOF { return nil }
            var text = String(cString: rd_kafka_err2str(m.err))
            if let payload = m.payload, m.len > 0 {
                text = String(decoding: UnsafeRawBufferPointer(start: payload, count: m.len), as: UTF8.self)
            }
            return .error(KafkaError(code: KafkaError.Code(rawValue: m.err.rawValue), message: "consume: \(text)"))
        }
        let topic = m.rkt.map { String(cString: rd_kafka_topic_name($0)) } ?? ""
        let key: [UInt8]? = m.key.map { [UInt8](UnsafeRawBufferPointer(start: $0, count: m.key_len)) }
        let value: [UInt8] = m.payload.map { [UInt8](UnsafeRawBufferPointer(start: $0, count: m.len)) } ?? []

        var headers: [(String, [UInt8])] = []
        var hdrs: OpaquePointer? = nil
        if rd_kafka_message_headers(pointer, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR, let hdrs {
            var index = 0
            var name: UnsafePointer<CChar>? = nil
            var valuePointer: UnsafeRawPointer? = nil
            var size = 0
            while rd_kafka_header_get_all(hdrs, index, &name, &valuePointer, &size) == RD_KAFKA_RESP_ERR_NO_ERROR {
                let bytes = valuePointer.map { [UInt8](UnsafeRawBufferPointer(start: $0, count: size)) } ?? []
                headers.append((name.map { String(cString: $0) } ?? "", bytes))
                index += 1
            }
        }
        var timestampType = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
        let timestamp = rd_kafka_message_timestamp(pointer, &timestampType)
        return .message(
            KafkaMessage(
                topic: topic, partition: m.partition, offset: m.offset, key: key, value: value, headers: headers,
                timestamp: timestampType == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE ? nil : timestamp
            ))
    }
}

/// The consumer's callback context: reaches the shared state from the rebalance callback.
final class ConsumerContext: RdKafkaContext, @unchecked Sendable {
    let state: ConsumerState
    let autoCommit: Bool
    /// The group's rebalance protocol, from the configured assignor. Not asked of librdkafka in the
    /// callback: `rd_kafka_rebalance_protocol` can block for ever in the revoke that
    /// `rd_kafka_consumer_close` raises (confluentinc/librdkafka#4041; Debian ships 2.0.2).
    let cooperative: Bool
    let revocationDeadline: Duration

    init(logger: Logger, state: ConsumerState, autoCommit: Bool, cooperative: Bool, revocationDeadline: Duration) {
        self.state = state
        self.autoCommit = autoCommit
        self.cooperative = cooperative
        self.revocationDeadline = revocationDeadline
        super.init(logger: logger)
    }

    /// Runs on the poll thread, inside `rd_kafka_consumer_poll` or `rd_kafka_consumer_close`.
    ///
    /// Assign: assign first, then report. Revoke: drop buffered messages of those partitions, report at
    /// the head of the queue, wait (up to `revocationDeadline`, not when closing) for the worker to ask
    /// for its next event, commit if auto-commit is off, and only then unassign: offsets the worker
    /// stores meanwhile still count.
    func rebalance(_ rk: OpaquePointer, _ err: rd_kafka_resp_err_t, _ list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) {
        let partitions = RdKafkaTopicPartitionList.partitions(of: list)
        logger.debug(
            "kafka consumer: rebalance",
            metadata: [
                "event": "\(KafkaError.Code(rawValue: err.rawValue))", "partitions": "\(partitions)",
                "protocol": "\(cooperative ? "cooperative" : "eager")",
            ])
        switch err {
        case RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS:
            if cooperative {
                if let error = rd_kafka_incremental_assign(rk, list) {
                    state.enqueue(.error(KafkaError(consuming: error, context: "incremental assign")))
                }
            } else {
                let assignErr = rd_kafka_assign(rk, list)
                if assignErr != RD_KAFKA_RESP_ERR_NO_ERROR {
                    state.enqueue(.error(KafkaError(assignErr, context: "assign")))
                }
            }
            // New partitions start paused while backpressure holds the rest.
            try? state.changeFetching(rk) { $0.partitionsAssigned(partitions, incremental: cooperative) }
            state.enqueue(.assigned(partitions))

        case RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS:
            state.watchdog?.forget(partitions)
            if state.revocationStarted(partitions) { waitForRevocationAck() }
            if !autoCommit {
                // A failure reaches the offset-commit callback (it is queued for synchronous commits
                // too), which reports it once.
                _ = rd_kafka_commit(rk, nil, 0)
            }
            if cooperative {
                if let error = rd_kafka_incremental_unassign(rk, list) {
                    state.enqueue(.error(KafkaError(consuming: error, context: "incremental unassign")))
                }
            } else {
                _ = rd_kafka_assign(rk, nil)
            }

        default:
            state.enqueue(.error(KafkaError(err, context: "rebalance")))
            _ = rd_kafka_assign(rk, nil)
            state.assignmentLost()
        }
    }

    /// Problems librdkafka only logs or calls back about become `.error` events, in order with the rest.
    override func report(_ error: KafkaError) {
        state.enqueue(.error(error))
    }

    /// A commit that a rebalance overtook: `REBALANCE_IN_PROGRESS` while the group rebalances, or
    /// `ILLEGAL_GENERATION` once it has moved to a new generation. Neither loses anything: a partition
    /// this member keeps has its stored offsets committed again under the new generation, and one it
    /// gave up is read by its new owner from the last committed offset, the jobs answered again
    /// idempotently. So they are counted (the `.error` event) and logged at info, not as warnings.
    /// While leaving they are debug: librdkafka 2.0.2 commits the stored offsets once more inside
    /// `rd_kafka_consumer_close`, and when another member's leaving has started a rebalance that
    /// repeat fails this way, after the worker's own final commit has reported its outcome.
    override func commitFailureLevel(_ err: rd_kafka_resp_err_t) -> Logger.Level {
        switch err {
        case RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS, RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION: state.isLeaving ? .debug : .info
        default: .warning
        }
    }

    /// Blocks the poll thread (ours, never the cooperative pool), checking every 2 ms, until the worker
    /// acknowledges the revocation or `revocationDeadline` passes.
    private func waitForRevocationAck() {
        let deadline = ContinuousClock.now + revocationDeadline
        while true {
            // A consumer asked to stop has no one left to acknowledge: unassign at once.
            switch state.revocationWait(deadlinePassed: ContinuousClock.now >= deadline || state.stop.isSet) {
            case .keepWaiting:
                usleep(2_000)
            case .unassign:
                return
            case .unassignAfterDeadline:
                logger.debug("kafka consumer: revocation not acknowledged in time, unassigning anyway")
                return
            }
        }
    }
}

/// File-private in spirit: only `KafkaConsumer.init` installs it.
func rebalanceTrampoline(
    _ rk: OpaquePointer?, _ err: rd_kafka_resp_err_t,
    _ list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?, _ opaque: UnsafeMutableRawPointer?
) {
    guard let rk, let list, let opaque else { return }
    guard let context = RdKafkaContext.from(opaque) as? ConsumerContext else {
        preconditionFailure("a rebalance reached a client whose context is not a consumer's")
    }
    context.rebalance(rk, err, list)
}

/// Global errors (`_ALL_BROKERS_DOWN`, `_TRANSPORT`, fatal errors): librdkafka calls it from
/// `rd_kafka_consumer_poll` (the main queue is forwarded to the consumer queue), so on the poll thread.
func consumerErrorTrampoline(_ rk: OpaquePointer?, _ err: Int32, _ reason: UnsafePointer<CChar>?, _ opaque: UnsafeMutableRawPointer?) {
    guard let opaque else { return }
    let context = RdKafkaContext.from(opaque)
    let text = reason.map { String(cString: $0) } ?? ""
    let error = KafkaError(code: KafkaError.Code(rawValue: err), message: "kafka: \(text)")
    context.logger.warning("kafka consumer error", metadata: ["error": "\(error.code)", "kind": "\(error.kind.rawValue)", "reason": "\(text)"])
    context.report(error)
}

/// The result of every commit: automatic, asynchronous and synchronous alike (librdkafka queues the
/// callback for all of them once it is set). Nothing to commit is not a failure.
func offsetCommitTrampoline(
    _ rk: OpaquePointer?, _ err: rd_kafka_resp_err_t, _ offsets: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?,
    _ opaque: UnsafeMutableRawPointer?
) {
    guard let opaque, err != RD_KAFKA_RESP_ERR_NO_ERROR, err != RD_KAFKA_RESP_ERR__NO_OFFSET else { return }
    let context = RdKafkaContext.from(opaque)
    let error = KafkaError(err, context: "offset commit", kind: .commitFailed)
    context.logger.log(
        level: context.commitFailureLevel(err), "kafka offset commit failed", metadata: ["error": "\(error.code)", "reason": "\(error.message)"])
    context.report(error)
}
