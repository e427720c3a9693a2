import FairPlay
import Foundation
import KSMService
import Licensing
import Logging
import RedisStore
import ServiceLifecycle
import Testing

/// The worker as docs/fleet.md's "Embedding the worker" builds it (Examples/Embedding/EmbeddedWorker.swift),
/// kept compiling and constructing: the library products are enough to run a worker in a
/// platform's own process, with its own logging.
@Suite struct EmbeddingTests {
    /// That code, as one function (it is not run: it would connect to Kafka and Redis).
    static func makeWorker(brokers: String, redisURL: String, credentialsPath: String, kekID: String, kek: [UInt8], logger: Logger) throws -> ServiceGroup {
        let credentials = try CredentialsFile.load(path: credentialsPath)
        let keyServer = KeyServerModule(credentials: try CredentialStore(credentials))
        let store = RedisLicenseStore(client: try RedisClient(configuration: RedisClientConfiguration(url: redisURL)))
        let keyring = KeyEncryptionKeyring()
        var key = kek
        try keyring.add(id: try StoreIdentifier(kekID), key: &key)
        let processor = LicenseProcessor(
            keyServer: keyServer, store: store, keyring: keyring, pool: CryptoPool(threadCount: 2), logger: logger,
            guards: JobGuards(store: store))
        var configuration = WorkerConfiguration(brokers: brokers)
        configuration.groupID = "my-platform-ksm"
        let worker = LicenseWorker(configuration: configuration, processor: processor, logger: logger)
        return ServiceGroup(configuration: .init(services: [worker], gracefulShutdownSignals: [.sigterm], logger: logger))
    }

    @Test("a worker is built from the library products alone, as docs/fleet.md shows")
    func workerFromLibraryProducts() throws {
        let directory = try SecretFileTests.copy(mode: 0o600)
        defer { try? FileManager.default.removeItem(at: directory) }
        let credentials = directory.appendingPathComponent("certificates.json").path
        _ = try Self.makeWorker(
            brokers: "127.0.0.1:9092", redisURL: "redis://127.0.0.1:6379/0", credentialsPath: credentials,
            kekID: "kek-1", kek: [UInt8](repeating: 7, count: 16), logger: quietLogger)
    }
}
