import Foundation
import FoundationXML

/// Reads a document that may be hostile into an ``XMLElementValue`` tree, with FoundationXML's
/// `XMLParser` (libxml2's SAX parser) doing the XML and this type deciding what reaches it.
///
/// Why the checks before parsing: swift-corelibs-foundation runs libxml2 with `XML_PARSE_NOENT`,
/// which substitutes every entity a DTD declares. An internal subset is thus enough for the billion
/// laughs (entities nesting entities) and for external entities (`SYSTEM "file:///etc/passwd"`),
/// whatever the resolving policy says for a parameter entity or a default loader. So no DTD ever
/// reaches libxml2: any `<!` other than a comment or a CDATA section is refused on the raw bytes.
/// That scan only means something if libxml2 reads the same characters the scan saw, so the
/// document must be UTF-8 (no NUL bytes, hence no UTF-16 or UTF-32) and an XML declaration may name
/// no other encoding. A CPIX document never needs a DTD, so nothing legitimate is lost; a comment
/// or CDATA section that itself contains `<!DOCTYPE` text is refused too, on purpose (simpler to
/// reason about than a tokenizer of our own).
///
/// Why the limits: the size cap applies before any parsing; the depth and element caps apply as
/// the parser reports elements and stop it at once (`abortParsing`), so a deep or wide document
/// costs at most the work up to the limit. Namespaces are processed (`shouldProcessNamespaces`):
/// elements are matched by namespace URI and local name, never by prefix, and an undeclared prefix
/// is a namespace error.
///
/// Pure and synchronous; each call uses its own parser, so concurrent calls are independent.
package enum SafeXMLReader {
    /// The root element of `bytes`.
    /// - Throws: ``XMLReadError`` naming the rule that failed, with line and column once parsing began.
    package static func read(_ bytes: [UInt8], limits: XMLReadLimits = XMLReadLimits()) throws(XMLReadError) -> XMLElementValue {
        try screen(bytes, limits: limits)
        let builder = XMLTreeBuilder(limits: limits)
        let parser = XMLParser(data: Data(bytes))
        parser.shouldProcessNamespaces = true
        parser.shouldReportNamespacePrefixes = false
        parser.shouldResolveExternalEntities = false
        parser.externalEntityResolvingPolicy = .never
        parser.delegate = builder
        let parsed = parser.parse()
        // The parser holds its delegate weakly; this keeps the builder alive through `parse()`.
        withExtendedLifetime(builder) {}
        if let stop = builder.stop { throw stop }
        // libxml2 reports a namespace error (an undeclared prefix) and parses on; any error refuses.
        guard parsed, builder.parserMessage == nil, let root = builder.root else {
            let message = builder.parserMessage ?? parser.parserError.map { "\($0.localizedDescription)" } ?? "the parser stopped"
            throw XMLReadError(.malformed(message), line: builder.errorLine ?? parser.lineNumber, column: builder.errorColumn ?? parser.columnNumber)
        }
        return root
    }

    /// The checks on raw bytes that keep libxml2 from ever seeing a DTD (see the type's comment).
    static func screen(_ bytes: [UInt8], limits: XMLReadLimits) throws(XMLReadError) {
        guard bytes.count <= limits.maximumBytes else { throw XMLReadError(.tooLarge(size: bytes.count, limit: limits.maximumBytes)) }
        guard bytes.contains(where: { !isXMLSpace($0) }) else { throw XMLReadError(.empty) }
        guard !bytes.contains(0), String(validating: bytes, as: UTF8.self) != nil else { throw XMLReadError(.notUTF8) }
        if let name = declaredEncoding(bytes), !["utf-8", "utf8"].contains(name.lowercased()) {
            throw XMLReadError(.unsupportedEncoding(name))
        }
        var index = 0
        while index + 1 < bytes.count {
            defer { index += 1 }
            guard bytes[index] == UInt8(ascii: "<"), bytes[index + 1] == UInt8(ascii: "!") else { continue }
            let rest = bytes[(index + 2)...]
            if rest.starts(with: Array("--".utf8)) || rest.starts(with: Array("[CDATA[".utf8)) { continue }
            let word = String(decoding: rest.prefix(7), as: UTF8.self).uppercased()
            if word.hasPrefix("DOCTYPE") { throw XMLReadError(.documentTypeDeclaration) }
            if word.hasPrefix("ENTITY") { throw XMLReadError(.entityDeclaration) }
            throw XMLReadError(.markupDeclaration)
        }
    }

    /// The `encoding` pseudo-attribute of a leading XML declaration, or nil when there is none.
    static func declaredEncoding(_ bytes: [UInt8]) -> String? {
        var start = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }
        guard bytes[start...].starts(with: Array("<?xml".utf8)) else { return nil }
        let head = bytes[start...].prefix(512)
        guard let end = head.firstIndex(of: UInt8(ascii: ">")) else { return nil }
        let declaration = String(decoding: head[..<end], as: UTF8.self)
        guard let key = declaration.range(of: "encoding") else { return nil }
        let after = declaration[key.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let quote = after.first, quote == "\"" || quote == "'" else { return String(after.prefix(40)) }
        return String(after.dropFirst().prefix { $0 != quote })
    }

    static func isXMLSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
