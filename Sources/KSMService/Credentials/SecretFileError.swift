/// Why a secret file was not loaded. Names the path and the fix; never the file's content.
public struct SecretFileError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String { reason }
}
