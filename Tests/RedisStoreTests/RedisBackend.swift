import KSMTestSupport
import RedisStore
import Testing

/// Which Redis a Redis-only test runs against: one server, or the shared six-node cluster
/// (``SharedRedisCluster``, emptied before each test). The store must behave the same on both.
enum RedisBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case single, cluster
    var testDescription: String { rawValue }

    /// Runs `body` with a client of a fresh (or freshly emptied) backend, released afterwards.
    func withClient(_ body: (any RedisCommandRunner) async throws -> Void) async throws {
        switch self {
        case .single:
            let server = try await RedisServerProcess()
            defer { server.stop() }
            try await body(try RedisClient(configuration: server.configuration()))
        case .cluster:
            try await SharedRedisCluster.with { cluster in
                try await body(try RedisClusterClient(configuration: cluster.configuration()))
            }
        }
    }

    /// Runs `body` with a store over a fresh backend.
    func withStore(_ body: (RedisLicenseStore) async throws -> Void) async throws {
        try await withClient { client in try await body(RedisLicenseStore(client: client)) }
    }

    /// Runs `body` with two independent key spaces of one backend, asked for in order: databases 0
    /// and 1 of one server, or the shared cluster emptied again before the second.
    func withTwoSpaces(_ body: (_ space: (Int) async throws -> any RedisCommandRunner) async throws -> Void) async throws {
        switch self {
        case .single:
            let server = try await RedisServerProcess()
            defer { server.stop() }
            try await body { index in
                var configuration = server.configuration()
                configuration.database = index
                return try RedisClient(configuration: configuration)
            }
        case .cluster:
            try await SharedRedisCluster.with { cluster in
                try await body { index in
                    if index > 0 { try await cluster.flushAll() }
                    return try RedisClusterClient(configuration: cluster.configuration())
                }
            }
        }
    }
}
