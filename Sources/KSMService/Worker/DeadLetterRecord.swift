import FairPlay
import Kafka
import Licensing
import Wire

/// Builds the dead-letter record of a message the worker cannot answer, never larger than the
/// producer accepts.
///
/// Why: the producer refuses a record over its `message.max.bytes` with `MSG_SIZE_TOO_LARGE`, which
/// no retry cures; a worker that forwarded a 1 MB request as it came retried it forever and its
/// partition never moved again. So the value is cut to ``Limits/valueBytes`` (the
/// original size in `dlq-truncated`, the whole value's SHA-256 in `dlq-sha256`, so it can still be
/// matched with the producer's copy), and oversize keys and header sets are left out (counted in
/// `dlq-key-dropped` / `dlq-headers-dropped`).
struct DeadLetterRecord: Sendable {
    /// How much of the original message a dead letter may carry.
    struct Limits: Sendable, Equatable {
        /// Value bytes kept; a longer value is truncated to this many. Default: 256 KiB.
        var valueBytes = 256 * 1024
        /// Total bytes of the original headers (names and values) kept; more and they are all left out.
        /// Default: 16 KiB.
        var headerBytes = 16 * 1024
        /// Longest key kept; a longer one is left out. Default: 4 KiB.
        var keyBytes = 4 * 1024
    }

    /// Headers this type writes (besides the original message's headers).
    enum Header {
        static let reason = "dlq-reason"
        static let source = "dlq-source"
        /// The original value's size in bytes, present when the value was cut (or left out).
        static let truncated = "dlq-truncated"
        /// Lowercase hex SHA-256 of the whole original value, present with `dlq-truncated`.
        static let sha256 = "dlq-sha256"
        static let headersDropped = "dlq-headers-dropped"
        static let keyDropped = "dlq-key-dropped"
        /// The job the record stands for, when it had a readable ID (undeliverable replies).
        static let jobID = "ksm-job-id"
    }

    /// The full form: the original value (cut to `limits.valueBytes`), key and headers, plus why.
    static func make(for message: KafkaMessage, reason: String, topic: String, limits: Limits) -> KafkaProducer.Record {
        var headers: [(String, [UInt8])] = []
        let headerBytes = message.headers.reduce(0) { $0 + $1.0.utf8.count + $1.1.count }
        if headerBytes <= limits.headerBytes {
            headers = message.headers
        } else {
            headers.append((Header.headersDropped, Array(String(message.headers.count).utf8)))
        }
        headers += ownHeaders(for: message, reason: reason)
        var value = message.value
        if value.count > limits.valueBytes {
            headers += digestHeaders(for: message)
            value = Array(message.value.prefix(max(0, limits.valueBytes)))
        }
        var key = message.key
        if let k = key, k.count > limits.keyBytes {
            headers.append((Header.keyDropped, Array(String(k.count).utf8)))
            key = nil
        }
        return KafkaProducer.Record(topic: topic, key: key, value: value, headers: headers)
    }

    /// The last-resort form, tried when the full form (or a reply) was refused for good: no value,
    /// no key, none of the original headers; only why, where from, the value's size and digest, and
    /// the job's ID and correlation ID when known (each cut to 256 bytes). A few hundred bytes.
    static func headersOnly(for message: KafkaMessage, reason: String, jobID: String?, topic: String) -> KafkaProducer.Record {
        var headers = ownHeaders(for: message, reason: String(decoding: reason.utf8.prefix(1024), as: UTF8.self))
        headers += digestHeaders(for: message)
        if let jobID { headers.append((Header.jobID, Array(jobID.utf8.prefix(256)))) }
        if let correlation = message.header("correlation-id") { headers.append(("correlation-id", Array(correlation.prefix(256)))) }
        return KafkaProducer.Record(topic: topic, key: nil, value: [], headers: headers)
    }

    private static func ownHeaders(for message: KafkaMessage, reason: String) -> [(String, [UInt8])] {
        [
            (Header.reason, Array(reason.utf8)),
            (Header.source, Array("\(message.topic)/\(message.partition)/\(message.offset)".utf8)),
        ]
    }

    private static func digestHeaders(for message: KafkaMessage) -> [(String, [UInt8])] {
        var hex: [UInt8] = []
        HexEncoding.append(FairPlayCrypto.sha256(message.value), to: &hex)
        return [(Header.truncated, Array(String(message.value.count).utf8)), (Header.sha256, hex)]
    }
}
