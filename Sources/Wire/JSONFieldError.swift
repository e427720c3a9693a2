/// A field of a JSON document that is missing or has the wrong type or value.
package struct JSONFieldError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The dotted path of the field; "" for the document itself.
    package let field: String
    package let reason: String

    package init(field: String, reason: String) {
        self.field = field
        self.reason = reason
    }

    package var description: String { field.isEmpty ? "document \(reason)" : "\"\(field)\" \(reason)" }
}
