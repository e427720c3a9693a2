/// What a command run to its end by ``ProcessRunner`` left behind.
package struct ProcessOutput: Sendable {
    /// How it ended (killed at the timeout: signalled, status -1).
    package var exit: ProcessExitStatus
    package var stdout: [UInt8]
    /// Empty when the run merged both streams into ``stdout``.
    package var stderr: [UInt8]

    /// The exit status, or the signal number when ``signalled``.
    package var status: Int32 { exit.status }
    package var signalled: Bool { exit.signalled }
    /// Exited on its own with status 0.
    package var succeeded: Bool { exit.succeeded }
    package var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    package var stderrText: String { String(decoding: stderr, as: UTF8.self) }
}
