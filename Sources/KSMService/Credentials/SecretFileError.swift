/// Why a secret file was not loaded. Names the path and the fix; never the file's content.
package struct SecretFileError: Error, Sendable, CustomStringConvertible {
    package let path: String
    package let reason: String

    package init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    package var description: String { reason }
}
