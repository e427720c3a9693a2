import Licensing

/// Why a key provider could not issue a key. `description` names identifiers and reasons, never
/// key bytes or a credential.
package struct PackagerKeyIssuerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, as an open set of static values.
    package struct Code: Sendable, Hashable, CustomStringConvertible {
        fileprivate let raw: String
        /// The request itself is wrong (content ID, key ID, IV, period, track type): answer 4xx.
        package static let invalidRequest = Code(raw: "invalidRequest")
        /// The tenant has no record in the store.
        package static let unknownTenant = Code(raw: "unknownTenant")
        /// The provider does not hold the tenant's key-encryption key, or a stored key or seed does
        /// not unwrap under it: an operator must fix the deployment.
        package static let keyring = Code(raw: "keyring")
        /// The store failed; see ``PackagerKeyIssuerError/isRetriable``.
        package static let store = Code(raw: "store")
        package var description: String { raw }
    }

    /// The kind of failure.
    package var code: Code
    /// A reason free of secrets.
    package var message: String
    /// True when the same request may succeed later (the store was unreachable).
    package var isRetriable: Bool
    /// Where the error was raised (`#fileID`), for logs.
    package var file: String
    /// The line that raised it, for logs.
    package var line: Int

    package init(_ code: Code, _ message: String, isRetriable: Bool = false, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.message = message
        self.isRetriable = isRetriable
        self.file = file
        self.line = line
    }

    /// A store error, keeping whether it may be retried.
    package init(store error: LicenseStoreError, file: String = #fileID, line: Int = #line) {
        self.init(.store, error.message, isRetriable: error.isRetriable, file: file, line: line)
    }

    package var description: String { message }

    /// Equality ignores where the error was raised.
    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.isRetriable == rhs.isRetriable
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
        hasher.combine(isRetriable)
    }
}
