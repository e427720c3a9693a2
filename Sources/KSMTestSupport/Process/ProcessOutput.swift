/// What a command run to its end by ``ProcessRunner`` left behind.
package struct ProcessOutput: Sendable {
    /// The exit status, or the signal number when ``signalled``.
    package var status: Int32
    /// True when a signal ended the process (Foundation's `.uncaughtSignal`).
    package var signalled: Bool
    package var stdout: [UInt8]
    /// Empty when the run merged both streams into ``stdout``.
    package var stderr: [UInt8]

    package var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    package var stderrText: String { String(decoding: stderr, as: UTF8.self) }
    /// Exited on its own with status 0.
    package var succeeded: Bool { !signalled && status == 0 }
}
