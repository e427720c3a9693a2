import Foundation
import KSMOperations
import KSMService
import Logging
import Prometheus
import ServiceLifecycle
import Synchronization
import Testing

/// `ServeRunner`, the worker process `ksm serve` composes, called directly: start-up refusals say
/// which part cannot start, before anything connects.
@Suite struct ServeRunnerTests {
    static let logger = Logger(label: "ksm.test.runner") { _ in SwiftLogNoOpLogHandler() }

    @Test("Credentials that cannot be read stop start-up with an error naming the file")
    func missingCredentials() async throws {
        let settings = try ServeConfiguration.resolve(flags: [:], environment: ServeConfigurationTests.required)
        let error = await #expect(throws: ServeRunner.StartError.self) {
            try await ServeRunner.run(settings, registry: PrometheusCollectorRegistry(), logger: Self.logger)
        }
        #expect(error?.description.contains("/c.json") == true, "\(String(describing: error))")
    }

    @Test("A redis-cluster:// URL with a database is refused by the configuration (so by --check-config too), naming the setting and never the password")
    func badClusterURL() async throws {
        let credentials = try KSMTestCredentials.privateCopy()
        defer { try? FileManager.default.removeItem(atPath: credentials.directory) }
        var environment = ServeConfigurationTests.required
        environment["KSM_CREDENTIALS"] = credentials.certificates
        environment["KSM_REDIS_URL"] = "redis-cluster://ksm:secret@127.0.0.1:1,127.0.0.1:2/3"
        let error = #expect(throws: ServeConfigurationError.self) { try ServeConfiguration.resolve(flags: [:], environment: environment) }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("KSM_REDIS_URL") && text.contains("database 0") && !text.contains("secret"), "\(text)")
    }

    @Test("A key-encryption key file that does not exist stops start-up naming the file")
    func missingKeyFile() async throws {
        let credentials = try KSMTestCredentials.privateCopy()
        defer { try? FileManager.default.removeItem(atPath: credentials.directory) }
        var environment = ServeConfigurationTests.required
        environment["KSM_CREDENTIALS"] = credentials.certificates
        environment["KSM_KEK_FILES"] = "kek-1=/nonexistent/kek-1"
        let settings = try ServeConfiguration.resolve(flags: [:], environment: environment)
        _ = try ServeRunner.keyServer(for: settings)
        let error = await #expect(throws: ServeRunner.StartError.self) {
            try await ServeRunner.run(settings, registry: PrometheusCollectorRegistry(), logger: Self.logger)
        }
        #expect(error?.description.contains("/nonexistent/kek-1") == true, "\(String(describing: error))")
    }
}

/// The repository's test credentials copied at mode 600 (git checks them out 0644).
enum KSMTestCredentials {
    static func privateCopy() throws -> (directory: String, certificates: String) {
        var root = URL(fileURLWithPath: #filePath)
        while !FileManager.default.fileExists(atPath: root.appendingPathComponent("Package.swift").path) { root.deleteLastPathComponent() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ksm-runner-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: root.appendingPathComponent("Fixtures/test-credentials"), to: directory)
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: directory.appendingPathComponent(name).path)
        }
        return (directory.path, directory.appendingPathComponent("certificates.json").path)
    }
}

/// The worker process's long-lived pieces are Services of one group: when another service fails,
/// the group cancels them and the pool is handed back, with nothing left running.
@Suite(.timeLimit(.minutes(1))) struct ServeServicesTests {
    struct Failing: Service {
        struct Failure: Error {}
        func run() async throws {
            try await Task.sleep(for: .milliseconds(50))
            throw Failure()
        }
    }

    @Test("a failing service stops the monitors and hands the crypto pool back")
    func failureStopsEverything() async throws {
        let stopped = Mutex(false)
        let monitor = MonitorService("test") {
            while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(10)) }
            stopped.withLock { $0 = true }
        }
        let pool = CryptoPool(threadCount: 1)
        let group = ServiceGroup(
            configuration: .init(services: [CryptoPoolService(pool: pool), monitor, Failing()], logger: ServeRunnerTests.logger))
        await #expect(throws: Failing.Failure.self) { try await group.run() }
        #expect(stopped.withLock { $0 })
        // Work after the shutdown still runs (on the caller's thread), never dropped.
        #expect(await pool.run { 7 } == 7)
    }
}
