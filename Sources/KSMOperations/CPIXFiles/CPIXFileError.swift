/// Why a CPIX file could not be exported or imported. `description` names files, tenants, KIDs
/// and `skd://` URIs, never a key byte.
package struct CPIXFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, as an open set of static values.
    package struct Code: Sendable, Hashable, CustomStringConvertible {
        fileprivate let raw: String
        /// The command line asks for something impossible (a period spec, a track type, a KID count).
        package static let invalidArgument = Code(raw: "invalidArgument")
        /// The document cannot be read or used: not well-formed, a DTD or entity, a missing key, a
        /// MAC that does not check, an algorithm not supported.
        package static let invalidDocument = Code(raw: "invalidDocument")
        /// An asset already holds a different key (import without `--replace`).
        package static let conflict = Code(raw: "conflict")
        /// The tenant has no record in the store.
        package static let unknownTenant = Code(raw: "unknownTenant")
        /// A key-encryption key is missing or a stored key does not unwrap.
        package static let keyring = Code(raw: "keyring")
        /// The store failed.
        package static let store = Code(raw: "store")
        package var description: String { raw }
    }

    /// The kind of failure.
    package var code: Code
    /// A sentence for the operator, free of secrets.
    package var message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { message }
}
