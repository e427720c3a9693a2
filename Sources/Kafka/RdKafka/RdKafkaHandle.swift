internal import CRdKafka
import OwnedThreads

/// The one owner of an `rd_kafka_t`; `deinit` destroys it, then tells the context.
///
/// `@unchecked Sendable`: librdkafka's API is thread-safe on one `rd_kafka_t`, and `raw` never changes.
final class RdKafkaHandle: @unchecked Sendable {
    enum Kind {
        case producer, consumer
    }

    private let raw: OpaquePointer
    private let context: RdKafkaContext
    private let abandoned = StopFlag()

    private init(raw: OpaquePointer, context: RdKafkaContext) {
        self.raw = raw
        self.context = context
    }

    /// Installs `context` on `config` and creates the client. On success librdkafka owns the
    /// configuration; on failure `config` still owns it and frees it in its `deinit`.
    static func make(_ kind: Kind, config: RdKafkaConfig, context: RdKafkaContext) throws(KafkaError) -> RdKafkaHandle {
        context.install(on: config)
        var errstr = [CChar](repeating: 0, count: 512)
        let type = kind == .producer ? RD_KAFKA_PRODUCER : RD_KAFKA_CONSUMER
        let rk = config.withRaw { conf in rd_kafka_new(type, conf, &errstr, errstr.count) }
        guard let rk else {
            let text = String(decoding: errstr.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw KafkaError(code: .configuration, message: "rd_kafka_new: \(text)", isRetriable: false)
        }
        config.relinquish()
        return RdKafkaHandle(raw: rk, context: context)
    }

    deinit {
        guard !abandoned.isSet else {
            // librdkafka keeps running with this opaque: the context must live on too.
            _ = Unmanaged.passRetained(context)
            return
        }
        let teardown = Teardown(raw: raw, context: context)
        // `rd_kafka_destroy` can block for as long as a broker is unreachable (a consumer leaving its
        // group, confluentinc/librdkafka#4519), so it never runs on the cooperative pool: where the last
        // reference drops in async code, a detached thread of ours destroys. `close()` drops it on one.
        OwnedThread.runOffPool(name: "kafka-destroy") { teardown.run() }
    }

    /// What destroying needs, handed to the thread that does it.
    private struct Teardown: @unchecked Sendable {
        // @unchecked: the pointer is used once, by the one thread that destroys it.
        let raw: OpaquePointer
        let context: RdKafkaContext

        func run() {
            rd_kafka_destroy(raw)
            context.didDestroy()
        }
    }

    /// Makes `deinit` leak the client instead of destroying it: the lesser evil where destroying would
    /// abort the process (see `KafkaConsumer.pollLoop`).
    func abandonInsteadOfDestroying() {
        abandoned.set()
    }

    /// Lends the pointer for the duration of `body` only; `self` stays alive until it returns.
    func withRaw<T, E: Error>(_ body: (OpaquePointer) throws(E) -> T) throws(E) -> T {
        defer { withExtendedLifetime(self) {} }
        return try body(raw)
    }
}
