internal import CRdKafka

/// An error from librdkafka or from this wrapper.
///
/// A struct with an extensible code rather than an enum, so new librdkafka codes never break callers.
/// `description` carries librdkafka's text, which never contains payloads or secrets.
package struct KafkaError: Error, Sendable, CustomStringConvertible {
    /// librdkafka's `rd_kafka_resp_err_t` value (negative: client-side, positive: broker-side), or one of
    /// this module's own codes below -10_000.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        package let rawValue: Int32
        package init(rawValue: Int32) { self.rawValue = rawValue }

        package static let noError = Code(rawValue: 0)
        package static let queueFull = Code(rawValue: RD_KAFKA_RESP_ERR__QUEUE_FULL.rawValue)
        package static let timedOut = Code(rawValue: RD_KAFKA_RESP_ERR__TIMED_OUT.rawValue)
        package static let messageTimedOut = Code(rawValue: RD_KAFKA_RESP_ERR__MSG_TIMED_OUT.rawValue)
        package static let transport = Code(rawValue: RD_KAFKA_RESP_ERR__TRANSPORT.rawValue)
        package static let allBrokersDown = Code(rawValue: RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN.rawValue)
        package static let invalidArgument = Code(rawValue: RD_KAFKA_RESP_ERR__INVALID_ARG.rawValue)
        package static let state = Code(rawValue: RD_KAFKA_RESP_ERR__STATE.rawValue)
        package static let purged = Code(rawValue: RD_KAFKA_RESP_ERR__PURGE_QUEUE.rawValue)
        package static let purgedInFlight = Code(rawValue: RD_KAFKA_RESP_ERR__PURGE_INFLIGHT.rawValue)
        package static let unknownTopicOrPartition = Code(rawValue: RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART.rawValue)
        package static let notLeaderForPartition = Code(rawValue: RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION.rawValue)
        package static let leaderNotAvailable = Code(rawValue: RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE.rawValue)
        package static let notEnoughReplicas = Code(rawValue: RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS.rawValue)
        package static let requestTimedOut = Code(rawValue: RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT.rawValue)
        package static let fatal = Code(rawValue: RD_KAFKA_RESP_ERR__FATAL.rawValue)
        /// The record (value, key and headers) is larger than the producer's `message.max.bytes` or the
        /// broker's limit: trying again never helps.
        package static let messageSizeTooLarge = Code(rawValue: RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE.rawValue)
        /// The fetch position was reset by `auto.offset.reset`: messages may have been skipped.
        package static let autoOffsetReset = Code(rawValue: RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET.rawValue)
        package static let offsetOutOfRange = Code(rawValue: RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE.rawValue)
        /// Nothing was stored to commit (not a failure).
        package static let noOffset = Code(rawValue: RD_KAFKA_RESP_ERR__NO_OFFSET.rawValue)
        /// The client was closed or destroyed (librdkafka's `_DESTROY`).
        package static let closed = Code(rawValue: RD_KAFKA_RESP_ERR__DESTROY.rawValue)
        /// Wrapper code: the processing loop stopped storing offsets (see `KafkaConsumer.Watchdog`).
        package static let processingStalled = Code(rawValue: -10_001)
        /// Wrapper code: a configuration key or value was rejected.
        package static let configuration = Code(rawValue: -10_002)
        /// Wrapper code: the sending task was cancelled before the record's delivery report came. The
        /// record may still be delivered; the caller must not count it as delivered.
        package static let deliveryWaitCancelled = Code(rawValue: -10_003)

        /// The code librdkafka names `name` (`NOT_LEADER_FOR_PARTITION`, `_TRANSPORT`; an `ERR_` prefix
        /// and case are ignored), or nil when no code has that name. For fault injection from text.
        package init?(name: String) {
            var wanted = name.uppercased()
            if wanted.hasPrefix("ERR_") { wanted.removeFirst(4) }
            // librdkafka's codes are contiguous ranges between these bounds; unknown values name themselves "ERR_<n>?".
            let range = RD_KAFKA_RESP_ERR__BEGIN.rawValue...RD_KAFKA_RESP_ERR_END_ALL.rawValue
            guard let raw = range.first(where: { String(cString: rd_kafka_err2name(rd_kafka_resp_err_t(rawValue: $0))) == wanted }) else { return nil }
            self.init(rawValue: raw)
        }

        /// librdkafka's symbolic name, e.g. `_QUEUE_FULL`.
        package var description: String {
            switch self {
            case .processingStalled: return "PROCESSING_STALLED"
            case .configuration: return "CONFIGURATION"
            case .deliveryWaitCancelled: return "DELIVERY_WAIT_CANCELLED"
            default: return String(cString: rd_kafka_err2name(rd_kafka_resp_err_t(rawValue: rawValue)))
            }
        }
    }

    /// What an operator alerts on, in a handful of values (a metrics label): see ``Kind``.
    package enum Kind: String, Sendable, CaseIterable {
        /// The fetch position jumped (`auto.offset.reset`): messages were skipped or will be read again.
        case offsetReset = "offset_reset"
        /// Stored offsets did not reach the broker: progress since the last commit may be redone.
        case commitFailed = "commit_failed"
        /// No broker is reachable (`_ALL_BROKERS_DOWN`).
        case brokersDown = "brokers_down"
        /// A connection failed or was dropped (`_TRANSPORT`, request timeouts).
        case transport
        /// A record the producer or broker refuses for its size.
        case messageTooLarge = "message_too_large"
        /// A delivery or request that ran out of time.
        case timedOut = "timed_out"
        /// Anything else.
        case other
    }

    package var code: Code
    /// The alerting category; derived from `code` unless the reporter knows better (a commit failure
    /// keeps its broker code but is `.commitFailed`).
    package var kind: Kind
    /// Human-readable detail (librdkafka's error string plus context).
    package var message: String
    /// True when the same operation may succeed if tried again later (broker down, queue full, timeout).
    package var isRetriable: Bool
    package var file: String
    package var line: UInt

    package init(code: Code, message: String, isRetriable: Bool? = nil, kind: Kind? = nil, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.kind = kind ?? Self.kind(of: code)
        self.message = message
        self.isRetriable = isRetriable ?? Self.retriableCodes.contains(code)
        self.file = file
        self.line = line
    }

    /// A sentence for logs and people: librdkafka's message and its code; where it was raised
    /// (`file`, `line`) stays in the value for debugging, out of the text.
    package var description: String { "Kafka: \(message) (\(code))" }

    /// Codes that are transient by nature; librdkafka's own `rd_kafka_error_is_retriable` wins where available.
    static let retriableCodes: Set<Code> = [
        .queueFull, .timedOut, .messageTimedOut, .transport, .allBrokersDown, .notLeaderForPartition,
        .leaderNotAvailable, .notEnoughReplicas, .requestTimedOut, .unknownTopicOrPartition,
    ]

    /// The category of a code, when nothing more is known about where the error came from.
    static func kind(of code: Code) -> Kind {
        switch code {
        case .autoOffsetReset, .offsetOutOfRange: .offsetReset
        case .allBrokersDown: .brokersDown
        case .transport: .transport
        case .messageSizeTooLarge: .messageTooLarge
        case .timedOut, .messageTimedOut, .requestTimedOut: .timedOut
        default: .other
        }
    }

    static func deliveryWaitCancelled(file: String = #fileID, line: UInt = #line) -> KafkaError {
        KafkaError(
            code: .deliveryWaitCancelled, message: "the sending task was cancelled before the delivery report",
            isRetriable: true, file: file, line: line)
    }

    static func closed(file: String = #fileID, line: UInt = #line) -> KafkaError {
        KafkaError(code: .closed, message: "the client is closed", isRetriable: false, file: file, line: line)
    }
}

extension KafkaError {
    /// From a plain response code, with librdkafka's text for it.
    init(_ err: rd_kafka_resp_err_t, context: String, kind: Kind? = nil, file: String = #fileID, line: UInt = #line) {
        let text = String(cString: rd_kafka_err2str(err))
        self.init(code: Code(rawValue: err.rawValue), message: "\(context): \(text)", kind: kind, file: file, line: line)
    }

    /// Takes ownership of an `rd_kafka_error_t` and destroys it.
    init(consuming error: OpaquePointer, context: String, file: String = #fileID, line: UInt = #line) {
        defer { rd_kafka_error_destroy(error) }
        let code = Code(rawValue: rd_kafka_error_code(error).rawValue)
        let text = String(cString: rd_kafka_error_string(error))
        let retriable = rd_kafka_error_is_retriable(error) != 0 || Self.retriableCodes.contains(code)
        self.init(code: code, message: "\(context): \(text)", isRetriable: retriable, file: file, line: line)
    }
}
