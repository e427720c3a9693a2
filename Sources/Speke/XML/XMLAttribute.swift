/// One attribute of an ``XMLElementValue``: its (unprefixed, or `xml:`-prefixed) name and value.
package struct XMLAttribute: Sendable, Hashable {
    package var name: String
    package var value: String

    package init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}
