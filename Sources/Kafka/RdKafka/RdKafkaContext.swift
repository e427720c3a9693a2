internal import CRdKafka
import Logging

/// The `opaque` of one `rd_kafka_t`: what its C callbacks reach through a file-private trampoline.
///
/// Owned by the `RdKafkaHandle` (passed to librdkafka unretained), so it outlives `rd_kafka_destroy`
/// and every callback librdkafka can still make. Subclasses add what their client needs.
class RdKafkaContext: @unchecked Sendable {
    // @unchecked: `logger` is immutable and Sendable; subclasses guard their own state with a Mutex.
    let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    /// Installs the callbacks every client gets: the log callback and this context as opaque.
    func install(on config: RdKafkaConfig) {
        config.withRaw { conf in
            rd_kafka_conf_set_opaque(conf, Unmanaged.passUnretained(self).toOpaque())
            rd_kafka_conf_set_log_cb(conf, rdKafkaLogTrampoline)
        }
    }

    /// Called right after `rd_kafka_destroy` returned: no callback can follow.
    func didDestroy() {}

    static func from(_ opaque: UnsafeMutableRawPointer) -> RdKafkaContext {
        Unmanaged<RdKafkaContext>.fromOpaque(opaque).takeUnretainedValue()
    }

    /// Called for librdkafka errors and warnings that mean lost progress or skipped messages (offset
    /// resets, commit failures, brokers down): the client counts them (consumers as `.error` events,
    /// producers through their `onError`). Runs on librdkafka's threads; keep it short.
    func report(_ error: KafkaError) {}

    /// How loudly a failed offset commit is logged: a warning, since a commit that fails loses
    /// progress (records are delivered again after a restart). Consumers lower it where nothing is lost.
    func commitFailureLevel(_ err: rd_kafka_resp_err_t) -> Logger.Level { .warning }

    /// librdkafka's syslog levels: 0-3 become error, 4 (warning) warning, 5-6 debug, 7 trace. A
    /// warning from librdkafka means something an operator should see (offset resets that
    /// skipped messages and `COMMITFAIL` were invisible at debug). An offset reset is also reported
    /// (``report(_:)``): librdkafka only logs it.
    fileprivate func log(level: Int32, facility: String, message: String) {
        let swiftLevel: Logger.Level =
            switch level {
            case ...3: .error
            case 4: .warning
            case 5, 6: .debug
            default: .trace
            }
        logger.log(
            level: swiftLevel, "kafka: \(message)",
            metadata: ["rdkafka.facility": "\(facility)", "rdkafka.level": "\(level)"]
        )
        if level <= 4, facility == "OFFSET", message.lowercased().contains("offset reset") {
            report(KafkaError(code: .autoOffsetReset, message: message, isRetriable: false, kind: .offsetReset))
        }
    }
}

/// Called on librdkafka's internal threads; swift-log handlers are thread-safe, and the context is
/// alive for as long as the `rd_kafka_t` is.
private func rdKafkaLogTrampoline(_ rk: OpaquePointer?, _ level: Int32, _ fac: UnsafePointer<CChar>?, _ buf: UnsafePointer<CChar>?) {
    guard let rk, let opaque = rd_kafka_opaque(rk) else { return }
    let context = RdKafkaContext.from(opaque)
    context.log(
        level: level,
        facility: fac.map { String(cString: $0) } ?? "",
        message: buf.map { String(cString: $0) } ?? ""
    )
}
