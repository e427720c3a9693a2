import Speke
import Testing

/// The reader against hostile and broken documents: each must be refused with the reason that
/// applies, promptly, never a crash, a hang or an entity expanded.
@Suite(.timeLimit(.minutes(2))) struct SafeXMLReaderTests {
    static func read(_ text: String, limits: XMLReadLimits = XMLReadLimits()) throws(XMLReadError) -> XMLElementValue {
        try SafeXMLReader.read(Array(text.utf8), limits: limits)
    }

    static func reason(_ text: String, limits: XMLReadLimits = XMLReadLimits()) -> XMLReadError.Reason? {
        do {
            _ = try read(text, limits: limits)
            return nil
        } catch {
            return error.reason
        }
    }

    @Test func readsElementsByNamespaceNotPrefix() throws {
        let prefixed = try Self.read(#"<x:CPIX xmlns:x="urn:dashif:org:cpix" contentId="a"><x:ContentKeyList/></x:CPIX>"#)
        let defaulted = try Self.read(#"<CPIX xmlns="urn:dashif:org:cpix" contentId="a"><ContentKeyList/></CPIX>"#)
        #expect(prefixed == defaulted)
        #expect(prefixed.namespace == "urn:dashif:org:cpix")
        #expect(prefixed.name == "CPIX")
        #expect(prefixed[attribute: "contentId"] == "a")
        #expect(prefixed.elements(CPIXNamespace.cpix, "ContentKeyList").count == 1)
    }

    @Test func keepsTextCDATAAndPredefinedEntities() throws {
        let root = try Self.read("<a><b>x &amp; &lt;y&gt; &#65;<![CDATA[<z>]]></b></a>")
        #expect(root.children.first?.text == "x & <y> A<z>")
    }

    @Test func refusesADocumentTypeDeclaration() {
        #expect(Self.reason(#"<?xml version="1.0"?><!DOCTYPE a><a/>"#) == .documentTypeDeclaration)
        #expect(Self.reason("<!doctype a><a/>") == .documentTypeDeclaration)
    }

    @Test func refusesTheBillionLaughs() {
        let laughs = """
            <?xml version="1.0"?>
            <!DOCTYPE lolz [
             <!ENTITY lol "lol">
             <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
             <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
            ]>
            <lolz>&lol3;</lolz>
            """
        #expect(Self.reason(laughs) == .documentTypeDeclaration)
    }

    @Test func refusesAnExternalEntity() {
        let xxe = #"<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]><a>&x;</a>"#
        #expect(Self.reason(xxe) == .documentTypeDeclaration)
        #expect(Self.reason(#"<a><!ENTITY x "y"></a>"#) == .entityDeclaration)
        #expect(Self.reason("<a><!ELEMENT a ANY></a>") == .markupDeclaration)
    }

    @Test func refusesAnUndeclaredEntityAsMalformed() {
        guard case .malformed = Self.reason("<a>&x;</a>") else {
            Issue.record("an undeclared entity must be a well-formedness error")
            return
        }
    }

    @Test func refusesEncodingsOtherThanUTF8() {
        #expect(Self.reason(#"<?xml version="1.0" encoding="UTF-16"?><a/>"#) == .unsupportedEncoding("UTF-16"))
        #expect(Self.reason(#"<?xml version='1.0' encoding='ISO-8859-1'?><a/>"#) == .unsupportedEncoding("ISO-8859-1"))
        #expect((try? Self.read(#"<?xml version="1.0" encoding="utf-8"?><a/>"#)) != nil)
        // UTF-16 with a byte order mark: NUL bytes, so never handed to libxml2.
        var utf16: [UInt8] = [0xFF, 0xFE]
        for unit in "<a/>".utf16 { utf16 += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        #expect(throws: XMLReadError(.notUTF8)) { try SafeXMLReader.read(utf16) }
        #expect(throws: XMLReadError(.notUTF8)) { try SafeXMLReader.read([0x3C, 0x61, 0xFF, 0x2F, 0x3E]) }
    }

    @Test func refusesADocumentOverTheSizeLimit() {
        let limits = XMLReadLimits(maximumBytes: 64)
        let text = "<a>" + String(repeating: "x", count: 100) + "</a>"
        #expect(Self.reason(text, limits: limits) == .tooLarge(size: 107, limit: 64))
        #expect(Self.reason(String(repeating: " ", count: (1 << 20) + 1)) == .tooLarge(size: (1 << 20) + 1, limit: 1 << 20))
    }

    @Test func refusesNestingDeeperThanTheLimit() throws {
        let deep = String(repeating: "<a>", count: 5000) + String(repeating: "</a>", count: 5000)
        let error = try #require(throws: XMLReadError.self) { try Self.read(deep) }
        #expect(error.reason == .tooDeep(limit: 32))
        #expect(error.line == 1)
        let limits = XMLReadLimits(maximumDepth: 3)
        #expect((try? Self.read("<a><b><c/></b></a>", limits: limits)) != nil)
        #expect(Self.reason("<a><b><c><d/></c></b></a>", limits: limits) == .tooDeep(limit: 3))
    }

    @Test func refusesMoreElementsThanTheLimit() {
        let wide = "<a>" + String(repeating: "<b/>", count: 30_000) + "</a>"
        #expect(Self.reason(wide) == .tooManyElements(limit: 20_000))
    }

    @Test(arguments: [
        "", "   \n", "garbage", "<a>", "<a></b>", "<a><b></a></b>", "</a>", "<a/><b/>", "<a x='1' x='2'/>", "<p:a/>", "<a>\u{1}</a>",
        "\u{FEFF}", "<?xml version=\"1.0\"?>", "<a", "<<<<>>>>", "<a b=c/>",
    ])
    func refusesGarbage(_ text: String) throws {
        let error = try #require(throws: XMLReadError.self) { try Self.read(text) }
        switch error.reason {
        case .empty, .malformed: break
        default: Issue.record("\(text.debugDescription): \(error)")
        }
        #expect(!error.description.isEmpty)
    }

    @Test func reportsWhereAMalformedDocumentBreaks() throws {
        let error = try #require(throws: XMLReadError.self) { try Self.read("<a>\n<b>\n</a>") }
        guard case .malformed = error.reason else {
            Issue.record("\(error)")
            return
        }
        #expect(error.line == 3)
    }

    /// Every proper prefix of a real request is refused with a typed error (never a crash or a tree).
    @Test func refusesEveryTruncationOfARealRequest() {
        let bytes = Array(CPIXDocuments.awsFairPlayRequest.utf8)
        for length in stride(from: 0, to: bytes.count, by: 7) {
            #expect(throws: XMLReadError.self) { try SafeXMLReader.read(Array(bytes[..<length])) }
        }
    }
}
