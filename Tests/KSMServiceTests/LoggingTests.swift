import FairPlay
import FairPlayDevice
import Foundation
import KSMService
import Licensing
import Logging
import Synchronization
import Testing
import Wire

/// Captures every log entry (message and metadata, flattened to text) at trace level.
/// A value type, as swift-log expects: each Logger copy carries its own metadata.
struct CapturingLogHandler: LogHandler {
    let sink: LogSink
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    init(sink: LogSink) { self.sink = sink }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        let text = "\(event.level) \(event.message) " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        sink.entries.withLock { $0.append(text) }
    }
}

/// Log sink shared by a test and its handler copies.
final class LogSink: Sendable {
    let entries = Mutex<[String]>([])
    var logger: Logger {
        Logger(label: "ksm.test") { _ in CapturingLogHandler(sink: self) }
    }
    var text: [String] { entries.withLock { $0 } }
}

@Suite struct LoggingTests {
    @Test func everyJobIsLoggedWithItsRequestIDAndNoSecrets() async throws {
        let world = try World()
        let store = InMemoryLicenseStore()
        try await world.seed(store)
        let sink = LogSink()
        let processor = LicenseProcessor(keyServer: try world.keyServer(), store: store, keyring: world.keyring, pool: sharedPool, logger: sink.logger)
        let play = MediaPlaybackInfo(creationDate: 1, state: .readyToPlay, sessionID: 5)
        let jobs = [
            try World.job("log-ok", device: world.deviceA, World.options(World.hdAsset, playback: play)).job,
            try World.job("log-unknown", tenant: "nobody", device: world.deviceA, World.options(World.hdAsset)).job,
            LicenseJob(id: id("log-garbage"), tenant: id("acme"), account: id("alice"), spc: [UInt8](repeating: 7, count: 64)),
        ]
        let payloads = jobs.map { $0.jsonBytes() } + [Array(#"{"id":"log-bad","spc":1}"#.utf8)]
        let replies = await processor.process(encoded: payloads, now: t0)
        #expect(replies.first?.status == .ok)
        let lines = sink.text
        for requestID in ["log-ok", "log-unknown", "log-garbage", "log-bad"] {
            #expect(lines.contains { $0.contains("fps.request_id=\(requestID)") }, "no log line for \(requestID)")
        }
        // Neither the content key (hex or base64), nor SPC bytes, nor the CKC appear anywhere.
        let key = world.keys[World.hdAsset]!.key
        let secrets = [
            HexEncoding.encode(key), Data(key).base64EncodedString(),
            String(Data(jobs[0].spc).base64EncodedString().prefix(24)), HexEncoding.encode(jobs[0].spc.prefix(24)),
            String(Data(replies[0].ckc!).base64EncodedString().prefix(24)), HexEncoding.encode(replies[0].ckc!.prefix(24)),
        ]
        for line in lines {
            for secret in secrets { #expect(!line.contains(secret), "a log line leaks secret material: \(line.prefix(120))") }
        }
    }
}
