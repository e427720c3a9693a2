// An embedder's own process around the worker: its logging, its metrics backend, its ServiceGroup.
// Only the library products' public API is used; the test suite type-checks this file against the
// built modules without package access, so the example and the public surface cannot drift apart.
import FairPlay
import KSMOperations
import KSMService
import Licensing
import Logging
import RedisStore
import ServiceLifecycle

/// The worker, with the swift-metrics series `ksm serve` exports, in a group the platform runs.
func makeEmbeddedWorker(brokers: String, redisURL: String, credentialsPath: String, kekID: String, kek: [UInt8], logger: Logger) throws -> ServiceGroup {
    let keyServer = KeyServerModule(credentials: try CredentialStore(try CredentialsFile.load(path: credentialsPath)))
    let store = RedisLicenseStore(client: try RedisClient(configuration: RedisClientConfiguration(url: redisURL)))
    let keyring = KeyEncryptionKeyring()
    var key = kek
    try keyring.add(id: try StoreIdentifier(kekID), key: &key)  // the key's bytes are cleansed
    let processor = LicenseProcessor(
        keyServer: keyServer, store: store, keyring: keyring, pool: CryptoPool(threadCount: 2), logger: logger, guards: JobGuards(store: store))
    var configuration = WorkerConfiguration(brokers: brokers)
    configuration.groupID = "my-platform-ksm"
    let worker = LicenseWorker(configuration: configuration, processor: processor, logger: logger)
    // Publishes to whatever MetricsSystem the platform bootstrapped before this call.
    let metrics = WorkerMetrics(version: "my-platform-1") {
        var inputs = WorkerMetrics.Inputs(statistics: worker.statistics.snapshot, storeUp: true, stalled: worker.isStalled, lag: worker.consumerLag)
        inputs.lagByClass = worker.consumerLagByClass
        return inputs
    }
    return ServiceGroup(configuration: .init(services: [worker, metrics], gracefulShutdownSignals: [.sigterm], logger: logger))
}
