import Foundation
import KSMTestSupport
import Testing

/// Every `public` declaration of a library product carries a `///` doc comment: public is what an
/// embedder reads (docs/architecture.md, "Access"), so a declaration made public without one fails
/// here, naming its file and line. Protocol witnesses whose meaning the protocol gives
/// (`description`, `==`, `<`, `hash(into:)`, `run()`) may go without.
@Suite struct PublicDocumentationTests {
    /// The library products, read from Package.swift so a new product is scanned without a change here.
    static func libraryProducts() throws -> [String] {
        let manifest = try String(contentsOf: KSMBinary.packageRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        return manifest.matches(of: #/\.library\(\s*name:\s*"([^"]+)"/#).map { String($0.output.1) }
    }

    /// A line that declares something public: attributes and other modifiers may come first.
    static var publicDeclaration: Regex<Substring> {
        #/^\s*(?:@[\w.]+(?:\([^)]*\))?\s+)*(?:(?:nonisolated|final|static|class|override|convenience|required|mutating|indirect|dynamic|lazy)\s+)*public\b/#
    }
    /// Protocol witnesses that may stay undocumented.
    static var witness: Regex<Substring> { #/\b(?:var description\b|func ==|func <|func hash\(into\b|func run\(\))/# }

    /// The 1-based lines of `source` that declare something public with no doc comment above them
    /// (attribute lines between the comment and the declaration are skipped over).
    static func undocumentedLines(in source: String) -> [(line: Int, text: String)] {
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
        let (declaration, witness) = (publicDeclaration, witness)
        var found: [(Int, String)] = []
        for (index, line) in lines.enumerated() where line.firstMatch(of: declaration) != nil && line.firstMatch(of: witness) == nil {
            var above = index - 1
            while above >= 0, lines[above].trimmingCharacters(in: .whitespaces).hasPrefix("@") { above -= 1 }
            let comment = above >= 0 ? lines[above].trimmingCharacters(in: .whitespaces) : ""
            if comment.hasPrefix("///") || comment.hasSuffix("*/") { continue }
            found.append((index + 1, line.trimmingCharacters(in: .whitespaces)))
        }
        return found
    }

    @Test("every public declaration of a library product has a doc comment")
    func publicDeclarationsAreDocumented() throws {
        let products = try Self.libraryProducts()
        #expect(products.contains("FairPlay") && products.contains("KSMService"), "no library products found in Package.swift: \(products)")
        let root = KSMBinary.packageRoot
        let declaration = Self.publicDeclaration
        var publicCount = 0
        var undocumented: [String] = []
        for product in products {
            let folder = root.appendingPathComponent("Sources/\(product)")
            guard let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else { continue }
            for case let file as URL in files where file.pathExtension == "swift" {
                let source = try String(contentsOf: file, encoding: .utf8)
                publicCount += source.split(separator: "\n").count { $0.firstMatch(of: declaration) != nil }
                let path = file.path.replacingOccurrences(of: root.path + "/", with: "")
                undocumented += Self.undocumentedLines(in: source).map { "\(path):\($0.line): \($0.text.prefix(100))" }
            }
        }
        // A scan that finds nothing public is a broken scan, not a documented surface.
        #expect(publicCount > 300, "only \(publicCount) public declarations found under Sources/{\(products.joined(separator: ","))}")
        #expect(undocumented.isEmpty, "public declarations without a /// doc comment:\n\(undocumented.sorted().joined(separator: "\n"))")
    }

    @Test("the scan finds an undocumented declaration and accepts documented ones and witnesses")
    func scanFindsWhatItShould() {
        let source = """
            /// Documented.
            public struct A: CustomStringConvertible {
                public var bare: Int
                /// Documented, with an attribute between.
                @inlinable
                public init() { bare = 0 }
                @discardableResult public func attributed() -> Int { 0 }
                public var description: String { "" }
                public static func == (a: A, b: A) -> Bool { true }
                public func hash(into hasher: inout Hasher) {}
                package var hidden: Int { 0 }
                /** A block doc comment. */
                public static let block = 1
            }
            """
        #expect(Self.undocumentedLines(in: source).map(\.line) == [3, 7])
    }
}
