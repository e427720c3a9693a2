/// A field of a JSON document that is missing or has the wrong type or value.
public struct JSONFieldError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The dotted path of the field; "" for the document itself.
    public let field: String
    public let reason: String

    public init(field: String, reason: String) {
        self.field = field
        self.reason = reason
    }

    public var description: String { field.isEmpty ? "document \(reason)" : "\"\(field)\" \(reason)" }
}
