/// Writes an ``XMLElementValue`` tree as a UTF-8 document: an XML declaration, every namespace
/// declared once on the root with the prefixes AWS's examples use (`cpix`, `pskc`, `enc`, `ds`;
/// `ns1`, `ns2`, ... for others), four-space indentation, and text escaped so that no value read
/// from a request can open markup.
package enum XMLWriter {
    /// The document for `root`. `declaring` lists namespaces to declare even when no element
    /// uses them (SPEKE makes `xmlns:cpix` and `xmlns:pskc` mandatory on `CPIX`).
    package static func document(_ root: XMLElementValue, declaring: [String] = []) -> [UInt8] {
        var namespaces = declaring
        collect(root, into: &namespaces)
        var prefixes: [String: String] = [:]
        var declarations: [XMLAttribute] = []
        var unknown = 0
        for uri in namespaces where !uri.isEmpty && prefixes[uri] == nil {
            let prefix: String
            if let known = CPIXNamespace.preferredPrefixes.first(where: { $0.uri == uri }) {
                prefix = known.prefix
            } else {
                unknown += 1
                prefix = "ns\(unknown)"
            }
            prefixes[uri] = prefix
            declarations.append(XMLAttribute("xmlns:\(prefix)", uri))
        }
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        write(root, prefixes: prefixes, extraAttributes: declarations, depth: 0, into: &out)
        return Array(out.utf8)
    }

    private static func collect(_ element: XMLElementValue, into namespaces: inout [String]) {
        if !namespaces.contains(element.namespace) { namespaces.append(element.namespace) }
        for child in element.children { collect(child, into: &namespaces) }
    }

    private static func write(_ element: XMLElementValue, prefixes: [String: String], extraAttributes: [XMLAttribute], depth: Int, into out: inout String) {
        let indent = String(repeating: "    ", count: depth)
        let name = prefixes[element.namespace].map { "\($0):\(element.name)" } ?? element.name
        out += indent + "<" + name
        // A prefixed attribute other than `xml:` lost its namespace URI in the reader; writing its
        // prefix without a declaration would not be namespace-well-formed, so it is left out.
        for attribute in element.attributes where !attribute.name.contains(":") || attribute.name.hasPrefix("xml:") {
            out += " \(attribute.name)=\"\(escape(attribute.value, inAttribute: true))\""
        }
        for attribute in extraAttributes {
            out += " \(attribute.name)=\"\(escape(attribute.value, inAttribute: true))\""
        }
        if element.children.isEmpty {
            if element.text.isEmpty {
                out += "/>\n"
            } else {
                out += ">" + escape(element.text, inAttribute: false) + "</\(name)>\n"
            }
            return
        }
        out += ">\n"
        if !element.text.allSatisfy(\.isWhitespace) { out += indent + "    " + escape(element.trimmedText, inAttribute: false) + "\n" }
        for child in element.children { write(child, prefixes: prefixes, extraAttributes: [], depth: depth + 1, into: &out) }
        out += indent + "</\(name)>\n"
    }

    /// Escapes `&`, `<`, `>` and, in attributes, `"` and the white space an attribute value would
    /// otherwise normalize away (tab, CR, LF as character references).
    static func escape(_ text: String, inAttribute: Bool) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"" where inAttribute: out += "&quot;"
            case "\t" where inAttribute: out += "&#9;"
            case "\n" where inAttribute: out += "&#10;"
            case "\r": out += "&#13;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
