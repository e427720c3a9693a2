/// A command that did not end within its ``ProcessRunner`` timeout; it was killed, and this carries
/// what it printed so far so the failure says where it hung.
package struct ProcessTimedOut: Error, CustomStringConvertible {
    package var command: String
    package var timeout: Duration
    package var output: ProcessOutput

    package var description: String {
        "\(command) did not finish within \(timeout) and was killed; stdout ends: \(output.stdoutText.suffix(1500)) stderr ends: \(output.stderrText.suffix(1500))"
    }
}
