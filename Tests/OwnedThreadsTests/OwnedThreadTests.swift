import Foundation
import OwnedThreads
import Synchronization
import Testing

@Suite struct OwnedThreadTests {
    @Test("A started thread runs its body under its name, off the caller's thread, and join waits for it")
    func startNamesAndJoins() {
        let seen = Mutex<(name: String, sameThread: Bool)?>(nil)
        let caller = pthread_self()
        let thread = OwnedThread.start(name: "owned-test") {
            let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            seen.withLock { $0 = (comm.trimmingCharacters(in: .newlines), pthread_equal(pthread_self(), caller) != 0) }
        }
        thread.join()
        let result = seen.withLock { $0 }
        #expect(result?.name == "owned-test")
        #expect(result?.sameThread == false)
    }

    @Test("run resumes the caller with the body's result; a name over 15 bytes is cut, not refused")
    func runReturnsTheResult() async {
        let name = await OwnedThread.run(name: "a-name-longer-than-fifteen-bytes") {
            (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines) ?? ""
        }
        #expect(name == "a-name-longer-t")
    }

    @Test("A requested stack size is honoured (a 1 MiB stack holds a 512 KiB buffer)")
    func stackSize() {
        let done = Mutex(false)
        OwnedThread.start(name: "owned-stack", stackSize: 1 << 20) {
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 512 * 1024) { buffer in
                buffer.initialize(repeating: 1)
                done.withLock { $0 = buffer[buffer.count - 1] == 1 }
            }
        }.join()
        #expect(done.withLock { $0 })
    }
}
