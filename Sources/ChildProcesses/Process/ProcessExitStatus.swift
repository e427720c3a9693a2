/// How a child process ended.
package struct ProcessExitStatus: Sendable, Equatable {
    /// The exit code, or the signal's number when ``signalled``.
    package var status: Int32
    package var signalled: Bool

    package var succeeded: Bool { !signalled && status == 0 }

    package init(status: Int32, signalled: Bool) {
        self.status = status
        self.signalled = signalled
    }
}
