/// An error from a ``LicenseStore``.
///
/// A struct with an extensible ``Code`` rather than a public enum, so new failure kinds do not break
/// callers that switch on them. `description` never contains key material: stores put identifiers
/// and backend messages in it, never wrapped keys or policy documents.
public struct LicenseStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, as an open set of static values.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        fileprivate let raw: String
        /// A tenant, account, request or device identifier is empty, too long, or has a reserved
        /// character (`{`, `}`, `:`, white space, control characters).
        public static let invalidIdentifier = Code(raw: "invalidIdentifier")
        /// A record in the backend could not be decoded (wrong type, missing field, bad number).
        public static let corruptRecord = Code(raw: "corruptRecord")
        /// The backend is unreachable or timed out; the same batch may be retried.
        public static let unavailable = Code(raw: "unavailable")
        /// The backend answered with an error that retrying will not fix.
        public static let backend = Code(raw: "backend")
        public var description: String { raw }
    }

    /// The kind of failure, for code that decides what to do next (retry, dead-letter, alert).
    public var code: Code
    /// A human-readable reason, free of secrets.
    public var message: String
    /// True when retrying the same batch later may succeed (connection lost, timeout).
    public var isRetriable: Bool
    /// The source file that raised the error (`#fileID`), for logs.
    public var file: String
    /// The line that raised the error, for logs.
    public var line: Int

    /// Creates an error; `file` and `line` default to the caller's position.
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: A reason free of secrets.
    ///   - isRetriable: True when the same batch may succeed later. Default: false.
    public init(
        _ code: Code, _ message: String, isRetriable: Bool = false,
        file: String = #fileID, line: Int = #line
    ) {
        self.code = code
        self.message = message
        self.isRetriable = isRetriable
        self.file = file
        self.line = line
    }

    /// The message, a sentence for logs and people; the code and where it was raised stay in the value.
    public var description: String { message }

    /// Equality ignores where the error was raised.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.isRetriable == rhs.isRetriable
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
        hasher.combine(isRetriable)
    }
}
