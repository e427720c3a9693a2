import Foundation
import Loopback
import OwnedThreads
import RedisStore

#if canImport(Glibc)
    import Glibc
#endif

/// A real `redis-server` on a free loopback port, started by the test and killed at its end.
///
/// Each server has a password (`--requirepass`, in ``configuration(poolSize:)`` and ``url``; a
/// cluster's nodes share one): tests run in parallel and reuse freed ports, so a client still
/// pointed at a stopped server's port (a worker reconnecting) fails to log in to whichever server
/// took the port instead of writing into another test's data. `--save '' --appendonly no`: nothing
/// touches the disk. `--enable-debug-command yes` lets tests use `DEBUG SLEEP` (Redis 7 disables
/// DEBUG by default). `@unchecked Sendable`: the process handle is only touched by the one test
/// that owns the server, never concurrently.
///
/// Foundation's `Process`, not swift-subprocess: the server lives as long as this object and is
/// killed and reaped from `stop()` and `deinit`, synchronously, at any moment; swift-subprocess
/// ties a child's life to an async closure's scope, and spawns where ``SpawnGate`` cannot be held
/// (``ProcessRunner`` has the measurement).
package final class RedisServerProcess: @unchecked Sendable {
    package private(set) var port: Int
    /// The server's `requirepass`.
    package let password: String
    private let extraArguments: [String]
    private var process: Process?

    /// Picks a free port and starts the server; returns once it answers PING. A server that exits
    /// at once (another process took the port between the pick and its bind: tests start many
    /// servers at the same moment) is started again on another port, up to five times.
    package init(password: String = RedisServerProcess.newPassword(), extraArguments: [String] = []) async throws {
        self.port = try Self.freeLoopbackPort()
        self.password = password
        self.extraArguments = extraArguments
        for attempt in 1...5 {
            do {
                try await start()
                return
            } catch let error as RedisError where error.code == .connectionFailed && processExited && attempt < 5 {
                stop()
                port = try Self.freeLoopbackPort()
            }
        }
    }

    /// True when the server was started and has exited on its own.
    private var processExited: Bool { process.map { !$0.isAlive } ?? false }

    deinit {
        stop()
    }

    /// Starts (or restarts) the server on the same port and waits until it answers.
    package func start() async throws {
        precondition(process == nil, "already running")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.serverPath)
        process.arguments =
            [
                "--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--enable-debug-command", "yes", "--daemonize", "no", "--dir", NSTemporaryDirectory(),
                // A file no one writes, so a start never loads another server's dump.rdb from the shared
                // directory (a cluster replica's full sync writes one there); `extraArguments` may override.
                "--dbfilename", "ksm-test-none-\(UUID().uuidString).rdb",
            ] + ["--requirepass", password] + extraArguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try SpawnGate.holding { try process.run() }
        self.process = process
        try await waitUntilAnswering()
    }

    /// Kills the server (SIGKILL: no goodbye to clients) and waits for it to exit (bounded: a
    /// killed server is gone within milliseconds, and a test never hangs on a missed exit).
    package func stop() {
        guard let process else { return }
        self.process = nil
        if process.isAlive {
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitForExitBlocking(timeout: .seconds(10))
    }

    /// The server's process ID while it runs (for CPU accounting in benchmarks).
    package var processIdentifier: Int32? {
        process.map(\.processIdentifier)
    }

    /// A client configuration pointing at this server. Timeouts far beyond any stall of a loaded CI
    /// host, so a slow moment never fails a command; a test about timeouts sets its own.
    package func configuration(poolSize: Int = 2) -> RedisClientConfiguration {
        RedisClientConfiguration(
            host: "127.0.0.1", port: port, password: password, connectTimeout: .seconds(10), commandTimeout: .seconds(30),
            poolSize: poolSize, reconnectBackoff: .init(base: .milliseconds(10), cap: .milliseconds(100)))
    }

    /// `redis://` URL of database 0 on this server, password included, for `ksm` command lines.
    package var url: String {
        "redis://:\(password)@127.0.0.1:\(port)/0"
    }

    /// A random password of 32 hex digits (URL-safe as it stands).
    package static func newPassword() -> String {
        (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    private func waitUntilAnswering() async throws {
        // Bounded by attempts, not by a wall-clock deadline: in a full `swift test` run, CPU-bound
        // suites can hold the cooperative pool for 15 s or more, so an attempt made before the server
        // listened delivers its "Connection refused" only after any deadline has passed. At least 500
        // attempts 20 ms apart and at least 60 s: a host whose cores are taken (a full run beside
        // two busy loops here) once needed more than 500.
        let patience = ContinuousClock.now + .seconds(60)
        var attempt = 0
        while attempt < 500 || ContinuousClock.now < patience {
            attempt += 1
            if processExited {
                throw RedisError(.connectionFailed, "redis-server on port \(port) exited at start (port taken?)", isRetriable: false)
            }
            do {
                // A fresh client per attempt, so no reconnect backoff carries over.
                let client = try RedisClient(configuration: configuration(poolSize: 1))
                _ = try await client.send(["PING"])
                return
            } catch  where error.code == .serverError {
                return  // LOADING and the like: it answers. (A failed login is another server on the port.)
            } catch {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        throw RedisError(.connectionFailed, "redis-server on port \(port) did not answer", isRetriable: false)
    }

    private static var serverPath: String {
        for path in ["/usr/bin/redis-server", "/usr/local/bin/redis-server", "/opt/homebrew/bin/redis-server"]
        where FileManager.default.isExecutableFile(atPath: path) {
            return path
        }
        return "/usr/bin/redis-server"
    }

    /// A TCP port on 127.0.0.1 that was free a moment ago and never handed out before in this
    /// process (``LoopbackSocket/unusedPort()``), for this server and for the other servers a test
    /// or a benchmark starts beside it.
    package static func freeLoopbackPort() throws(LoopbackSocketError) -> Int {
        try LoopbackSocket.unusedPort()
    }
}
