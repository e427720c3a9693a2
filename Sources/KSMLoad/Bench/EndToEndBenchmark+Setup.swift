import ChildProcesses
import FairPlay
import KSMService
import Kafka
import Licensing
import Logging
import RedisStore

extension EndToEndBenchmark {
    /// What `ksm bench e2e` varies.
    package struct Setup: Sendable {
        package var fixtures = "Fixtures/test-credentials"
        package var jobs = 4000
        package var workers = 1
        /// Nil: a redis-server of its own on a free loopback port.
        package var redisURL: String?
        package var cache = true
        package var batchSize = 64
        /// Nil: four per crypto thread, as `ksm serve` sizes it.
        package var concurrentBatches: Int?
        package init() {}
    }

    /// The whole run: an in-process mock cluster with the three topics, Redis (its own or the one
    /// named), the demo catalogue provisioned, then ``run()``.
    package static func run(_ setup: Setup) async throws -> Result {
        var logger = Logger(label: "ksm.bench")
        logger.logLevel = .error
        let test = try TestCredentials(directory: setup.fixtures)
        let cluster = try KafkaMockCluster(brokers: 1, logger: logger)
        for topic in ["fps.license.requests", "fps.license.replies"] { try cluster.createTopic(topic, partitions: 12) }
        try cluster.createTopic("fps.license.dlq", partitions: 1)
        var localRedis: RedisServerProcess?
        defer { localRedis?.stop() }
        let configuration: RedisClientConfiguration
        if let url = setup.redisURL {
            configuration = try RedisClientConfiguration(url: url)
        } else {
            let server = try await RedisServerProcess()
            localRedis = server
            configuration = server.configuration(poolSize: 4)
        }
        let store = RedisLicenseStore(client: try RedisClient(configuration: configuration, logger: logger))
        let catalog = DemoCatalog(tenant: "bench", streams: 8, periods: 1)
        let keyring = try await catalog.provision(store, credentials: test)
        var bench = EndToEndBenchmark(
            brokers: cluster.bootstrapServers, store: setup.cache ? CachingLicenseStore(store) : store,
            server: KeyServerModule(credentials: try CredentialStore(test.credentials)),
            trust: test.trust, catalog: catalog, keyring: keyring, jobs: setup.jobs, workers: setup.workers, logger: logger)
        bench.batchSize = setup.batchSize
        bench.concurrentBatches = setup.concurrentBatches
        bench.redisPID = localRedis?.processIdentifier
        let result = try await bench.run()
        withExtendedLifetime(cluster) {}
        return result
    }
}
