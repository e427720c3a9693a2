/// One XML element as a value: its namespace URI and local name, its attributes, its child elements
/// and its character data. What ``SafeXMLReader`` returns and what ``XMLWriter`` writes.
///
/// Names are namespace URI plus local name, never prefixes: a document may spell `cpix:` as a default
/// namespace or any prefix it likes. Comments, processing instructions and white space between
/// elements are not kept.
package struct XMLElementValue: Sendable, Hashable {
    /// The namespace URI; empty for an element in no namespace.
    package var namespace: String
    package var name: String
    /// Attributes sorted by name (XML gives them no order). Unprefixed names; a prefixed name keeps
    /// its prefix (`xml:lang`).
    package var attributes: [XMLAttribute]
    package var children: [XMLElementValue]
    /// The element's own character data (CDATA included), concatenated; empty when it had none.
    package var text: String

    package init(_ namespace: String, _ name: String, attributes: [XMLAttribute] = [], children: [XMLElementValue] = [], text: String = "") {
        self.namespace = namespace
        self.name = name
        self.attributes = attributes
        self.children = children
        self.text = text
    }

    /// The value of the unprefixed attribute `name`, or nil when absent.
    package subscript(attribute name: String) -> String? {
        attributes.first { $0.name == name }?.value
    }

    /// Sets, replaces or (with nil) removes an attribute, keeping the list sorted.
    package mutating func set(attribute name: String, _ value: String?) {
        attributes.removeAll { $0.name == name }
        if let value {
            attributes.append(XMLAttribute(name, value))
            attributes.sort { $0.name < $1.name }
        }
    }

    /// The child elements named `name` in `namespace`, in document order.
    package func elements(_ namespace: String, _ name: String) -> [XMLElementValue] {
        children.filter { $0.namespace == namespace && $0.name == name }
    }

    /// The character data with surrounding white space removed (what xs:base64Binary and most
    /// attribute-like values mean).
    package var trimmedText: String {
        guard let first = text.firstIndex(where: { !$0.isWhitespace }), let last = text.lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(text[first...last])
    }
}
