import Foundation
import KSMTestSupport
import OwnedThreads
import Synchronization

@testable import RedisStore

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback "Redis" that answers each command with whatever bytes a test decides: malformed
/// replies that no real server sends, so the client's reading of them is tested through a socket.
/// Commands are parsed with ``HiredisReader`` (a command is a RESP array of bulk strings).
final class ScriptedRedisNode: Sendable {
    enum Answer: Sendable {
        /// These bytes, then the next command.
        case bytes([UInt8])
        /// `header`, then `body` again and again until the client hangs up.
        case endless(header: [UInt8], body: [UInt8])
    }

    let port: Int
    var address: RedisNodeAddress { RedisNodeAddress(host: "127.0.0.1", port: port) }
    private let listener: Int32
    private let stopped = Atomic<Bool>(false)
    private let answer: @Sendable (_ command: [String], _ port: Int) -> Answer
    private let finished = DispatchSemaphore(value: 0)
    /// The connection being served, -1 between connections: `stop` shuts it down, so a send blocked
    /// on a client that stopped reading returns at once instead of holding `stop` (and the test's
    /// cooperative thread) until the client hangs up.
    /// Held while the descriptor is shut down or closed, so `stop` never reaches a number that was
    /// closed and handed to another socket meanwhile.
    private let current = Mutex<Int32>(-1)

    /// `answer` gets each command's arguments (decoded as UTF-8) and this node's port.
    init(answer: @escaping @Sendable (_ command: [String], _ port: Int) -> Answer) throws {
        let (fd, port) = try LoopbackSocket.boundOnUnusedPort()
        guard listen(fd, 16) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        self.listener = fd
        self.port = port
        self.answer = answer
        OwnedThread.start(name: "scripted-redis-node") { [self] in
            serveLoop()
            finished.signal()
        }.detach()
    }

    /// Stops accepting and waits for the serving thread to end (call it: the thread keeps the
    /// node alive until then).
    func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        current.withLock { client in
            if client >= 0 { shutdown(client, Int32(SHUT_RDWR)) }
        }
        finished.wait()
        close(listener)
    }

    private func serveLoop() {
        while !stopped.load(ordering: .relaxed) {
            var pfd = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 50) > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            current.withLock { $0 = client }
            // A stop between accept and the line above found no connection to shut down.
            if stopped.load(ordering: .acquiring) { shutdown(client, Int32(SHUT_RDWR)) }
            serve(client)
            current.withLock {
                $0 = -1
                close(client)
            }
        }
    }

    /// One connection, commands in order, until the client hangs up or the node stops.
    private func serve(_ client: Int32) {
        guard let reader = HiredisReader() else { return }
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while !stopped.load(ordering: .relaxed) {
            var pfd = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 50) >= 0 else { return }
            if pfd.revents == 0 { continue }
            let count = buffer.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            guard (try? reader.feed(Array(buffer[0..<count]))) != nil else { return }
            while let command = try? reader.next() {
                let arguments = command.arrayValue?.compactMap(\.string) ?? []
                switch answer(arguments, port) {
                case .bytes(let bytes):
                    guard write(all: bytes, to: client) else { return }
                case .endless(let header, let body):
                    guard write(all: header, to: client) else { return }
                    while !stopped.load(ordering: .relaxed), write(all: body, to: client) {}
                    return
                }
            }
        }
    }

    private func write(all bytes: [UInt8], to fd: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    /// A `CLUSTER SHARDS` reply in RESP: one shard holding every slot, its master at `port`.
    static func shardsReply(masterPort port: Int) -> [UInt8] {
        let node =
            "*14\r\n$2\r\nid\r\n$40\r\n\(String(repeating: "a", count: 40))\r\n$4\r\nport\r\n:\(port)\r\n$2\r\nip\r\n$9\r\n127.0.0.1\r\n"
            + "$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$18\r\nreplication-offset\r\n:0\r\n$6\r\nhealth\r\n$6\r\nonline\r\n"
        return Array("*1\r\n*4\r\n$5\r\nslots\r\n*2\r\n:0\r\n:16383\r\n$5\r\nnodes\r\n*1\r\n\(node)".utf8)
    }
}
