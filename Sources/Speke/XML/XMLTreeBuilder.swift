import Foundation
import FoundationXML

/// The `XMLParser` delegate behind ``SafeXMLReader``: builds the element tree and stops the parser
/// the moment a limit is crossed.
///
/// One per parse, used on the parsing thread only, and never shared: not `Sendable`.
final class XMLTreeBuilder: NSObject, XMLParserDelegate {
    private let limits: XMLReadLimits
    /// Open elements, innermost last.
    private var stack: [XMLElementValue] = []
    private var elementCount = 0
    private(set) var root: XMLElementValue?
    /// Set when a limit stopped the parser; the reader throws it instead of libxml2's "aborted".
    private(set) var stop: XMLReadError?
    /// libxml2's first error message and position, when it reported one.
    private(set) var parserMessage: String?
    private(set) var errorLine: Int?
    private(set) var errorColumn: Int?

    init(limits: XMLReadLimits) {
        self.limits = limits
    }

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName qName: String?,
        attributes attributeDict: [String: String]
    ) {
        guard stop == nil else { return }
        elementCount += 1
        if elementCount > limits.maximumElements {
            halt(parser, .tooManyElements(limit: limits.maximumElements))
            return
        }
        if stack.count + 1 > limits.maximumDepth {
            halt(parser, .tooDeep(limit: limits.maximumDepth))
            return
        }
        let attributes = attributeDict.map { XMLAttribute($0.key, $0.value) }.sorted { $0.name < $1.name }
        stack.append(XMLElementValue(namespaceURI ?? "", elementName, attributes: attributes))
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        guard stop == nil, var element = stack.popLast() else { return }
        // Character data between child elements is layout, not content.
        if !element.children.isEmpty, element.text.allSatisfy(\.isWhitespace) { element.text = "" }
        if stack.isEmpty {
            root = element
        } else {
            stack[stack.count - 1].children.append(element)
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        guard stop == nil, !stack.isEmpty else { return }
        stack[stack.count - 1].text += string
    }

    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
        guard stop == nil, !stack.isEmpty else { return }
        stack[stack.count - 1].text += String(decoding: CDATABlock, as: UTF8.self)
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
        guard parserMessage == nil else { return }
        parserMessage = "\(parseError.localizedDescription) (XMLParser code \((parseError as NSError).code))"
        errorLine = parser.lineNumber
        errorColumn = parser.columnNumber
    }

    /// Never called with a DTD refused up front; answers "no data" should libxml2 ask anyway.
    func parser(_ parser: XMLParser, resolveExternalEntityName name: String, systemID: String?) -> Data? {
        nil
    }

    private func halt(_ parser: XMLParser, _ reason: XMLReadError.Reason) {
        stop = XMLReadError(reason, line: parser.lineNumber, column: parser.columnNumber)
        parser.abortParsing()
    }
}
