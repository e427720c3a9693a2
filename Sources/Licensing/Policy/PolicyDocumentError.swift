/// Why a policy document is unusable. Names the field (a dotted path such as `rental.not-after`)
/// and what it must be; never quotes the document, which may sit inside a signed token.
package struct PolicyDocumentError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The dotted path of the offending field; empty for the document as a whole.
    package var field: String
    /// What the field must be.
    package var reason: String

    package init(field: String, reason: String) {
        self.field = field
        self.reason = reason
    }

    package var description: String {
        field.isEmpty ? "invalid policy: \(reason)" : "invalid policy: \"\(field)\" \(reason)"
    }
}
