/// Why ``SafeXMLReader`` refused a document, with the line and column where libxml2 or a limit
/// stopped it (nil when the document was refused before parsing).
///
/// The description names the rule that failed and never quotes the document.
package struct XMLReadError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The rule a document broke.
    package enum Reason: Hashable, Sendable {
        /// Zero bytes, or nothing but white space.
        case empty
        /// Larger than ``XMLReadLimits/maximumBytes``.
        case tooLarge(size: Int, limit: Int)
        /// Elements nested deeper than ``XMLReadLimits/maximumDepth``.
        case tooDeep(limit: Int)
        /// More elements than ``XMLReadLimits/maximumElements``.
        case tooManyElements(limit: Int)
        /// A `<!DOCTYPE`: document type declarations are never read (no DTD, no entities).
        case documentTypeDeclaration
        /// An `<!ENTITY` declaration.
        case entityDeclaration
        /// Another `<!` markup declaration (`<!ELEMENT`, `<!ATTLIST`, `<!NOTATION`, ...).
        case markupDeclaration
        /// Bytes that are not UTF-8, or a NUL byte (UTF-16 and UTF-32 documents included).
        case notUTF8
        /// An XML declaration naming an encoding other than UTF-8.
        case unsupportedEncoding(String)
        /// Not well-formed, or not namespace-well-formed: libxml2's message.
        case malformed(String)
    }

    package var reason: Reason
    /// 1-based line of the failure, when the parser had started.
    package var line: Int?
    /// 1-based column of the failure, when the parser had started.
    package var column: Int?

    package init(_ reason: Reason, line: Int? = nil, column: Int? = nil) {
        self.reason = reason
        self.line = line
        self.column = column
    }

    package var description: String {
        let what: String
        switch reason {
        case .empty: what = "the document is empty"
        case .tooLarge(let size, let limit): what = "the document is \(size) bytes, more than the limit of \(limit)"
        case .tooDeep(let limit): what = "elements are nested deeper than \(limit) levels"
        case .tooManyElements(let limit): what = "the document has more than \(limit) elements"
        case .documentTypeDeclaration: what = "a document type declaration (<!DOCTYPE) is not accepted"
        case .entityDeclaration: what = "an entity declaration (<!ENTITY) is not accepted"
        case .markupDeclaration: what = "a markup declaration (<!...) is not accepted"
        case .notUTF8: what = "the document is not UTF-8"
        case .unsupportedEncoding(let name): what = "the declared encoding \(name.prefix(40)) is not UTF-8"
        case .malformed(let message): what = "not well-formed XML: \(message.prefix(200))"
        }
        guard let line else { return what }
        return "\(what) (line \(line), column \(column ?? 0))"
    }
}
