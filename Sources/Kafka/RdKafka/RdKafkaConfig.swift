internal import CRdKafka

/// Owns an `rd_kafka_conf_t` until `rd_kafka_new` takes it; frees it otherwise.
final class RdKafkaConfig {
    /// nil once ownership moved into an `rd_kafka_t`.
    private(set) var raw: OpaquePointer?

    init() {
        raw = rd_kafka_conf_new()
    }

    deinit {
        if let raw { rd_kafka_conf_destroy(raw) }
    }

    /// Every typed setting and every passthrough property goes through here, so librdkafka validates it.
    func set(_ key: String, _ value: String) throws(KafkaError) {
        guard let raw else { preconditionFailure("configuration already consumed") }
        var errstr = [CChar](repeating: 0, count: 512)
        let result = rd_kafka_conf_set(raw, key, value, &errstr, errstr.count)
        guard result == RD_KAFKA_CONF_OK else {
            var text = String(decoding: errstr.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            // librdkafka quotes a value it refuses (`Invalid value "..." for ...`), and the value may
            // be a password: the message keeps the key and the reason, never the value.
            if !value.isEmpty { text = text.replacing(value, with: "<value not shown>") }
            throw KafkaError(code: .configuration, message: "\(key): \(text)", isRetriable: false)
        }
    }

    func set(_ properties: [String: String]) throws(KafkaError) {
        // Sorted so a rejected configuration always reports the same key first.
        for (key, value) in properties.sorted(by: { $0.key < $1.key }) {
            try set(key, value)
        }
    }

    /// Hands the pointer to `rd_kafka_new`; call `relinquish()` only once it succeeded.
    func withRaw<T>(_ body: (OpaquePointer) -> T) -> T {
        guard let raw else { preconditionFailure("configuration already consumed") }
        return body(raw)
    }

    func relinquish() {
        raw = nil
    }
}
