/// A child process that did not do what its owner waited for: exited early, printed nothing, or
/// never reached a status; the description carries the end of its output.
package struct ProcessFailure: Error, CustomStringConvertible {
    package var description: String

    package init(description: String) {
        self.description = description
    }
}
