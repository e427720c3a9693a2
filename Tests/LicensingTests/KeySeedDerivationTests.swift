import Foundation
import KSMTestSupport
import Licensing
import Testing
import Wire

/// The key-seed derivation of docs/key-seeds.md. The vectors were computed with Python's `hmac`
/// module (an implementation independent of this one, the snippet in the doc); the same table is
/// printed in the doc, so a packager can check its own code against it.
@Suite struct KeySeedDerivationTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        var seed: [UInt8]
        var assetID: [UInt8]
        var period: String?
        var key: String
        var iv: String
        var testDescription: String { "\(String(decoding: assetID, as: UTF8.self))\(period.map { " p=\($0)" } ?? "")" }
    }

    static let sequential = Array(UInt8(0)...UInt8(31))
    static let allOnes = [UInt8](repeating: 0xFF, count: 32)

    static let vectors: [Vector] = [
        Vector(
            seed: sequential, assetID: Array("skd://acme/live-1".utf8), period: nil, key: "5bd2de00f6aaf95087414346767cbb84",
            iv: "3235e2aef1b100678947b0d34b7b8fa0"),
        Vector(
            seed: sequential, assetID: Array("skd://acme/live-1".utf8), period: "p42", key: "a7ffeed79abd4da45387fbdcb895f202",
            iv: "b8506848178e4251100d1cfb1653f196"),
        Vector(
            seed: sequential, assetID: Array("skd://acme/live-2".utf8), period: nil, key: "f75db182b702f4bf1b71ace50166a821",
            iv: "9fcff38f4fb5174206e4ba92599478f2"),
        Vector(seed: allOnes, assetID: [0x00, 0x01, 0x02], period: nil, key: "3a280033cabd0b3062b1b78fa4e9dd9c", iv: "869c1f65fb57573b7d3b86688742e720"),
        Vector(
            seed: allOnes, assetID: Array("skd://acme/live-1".utf8), period: nil, key: "49b0a0c05a415d52b52fae7091d4aa8d",
            iv: "f82dc95776891e9078291d9d8d34496e"),
    ]

    @Test(arguments: vectors)
    func derivationMatchesTheDocumentedVector(_ v: Vector) throws {
        let derived = try ContentKeyDerivation.derive(seed: v.seed, assetID: v.assetID, keyPeriod: v.period)
        #expect(HexEncoding.encode(derived.key) == v.key)
        #expect(HexEncoding.encode(derived.iv) == v.iv)
    }

    @Test func noPeriodAndEmptyPeriodAreTheSameKeyButOtherPeriodsDiffer() throws {
        let asset = Array("skd://acme/live-1".utf8)
        let none = try ContentKeyDerivation.derive(seed: Self.sequential, assetID: asset)
        #expect(try ContentKeyDerivation.derive(seed: Self.sequential, assetID: asset, keyPeriod: "") == none)
        #expect(try ContentKeyDerivation.derive(seed: Self.sequential, assetID: asset, keyPeriod: "p1") != none)
    }

    @Test func lengthPrefixesKeepAssetAndPeriodFromRunningTogether() throws {
        // Without length prefixes ("ab", "c") and ("a", "bc") would hash the same bytes.
        let a = try ContentKeyDerivation.message(assetID: Array("ab".utf8), keyPeriod: "c")
        let b = try ContentKeyDerivation.message(assetID: Array("a".utf8), keyPeriod: "bc")
        #expect(a != b)
        #expect(a == Array("fpsksm-keyseed-v1".utf8) + [0, 0, 2] + Array("ab".utf8) + [0, 1] + Array("c".utf8))
    }

    @Test func seedOfTheWrongLengthOrEmptyAssetIsRefused() {
        #expect(throws: ContentKeyDerivation.InvalidInput.self) { try ContentKeyDerivation.derive(seed: [UInt8](repeating: 1, count: 16), assetID: [1]) }
        #expect(throws: ContentKeyDerivation.InvalidInput.self) { try ContentKeyDerivation.derive(seed: Self.sequential, assetID: []) }
        #expect(throws: ContentKeyDerivation.InvalidInput.self) {
            try ContentKeyDerivation.derive(seed: Self.sequential, assetID: [UInt8](repeating: 1, count: 65_536))
        }
    }

    static let python3: String? =
        ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }
        ?? ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":").map { "\($0)/python3" }.first { FileManager.default.isExecutableFile(atPath: $0) }

    /// The doc's Python snippet, run as written, prints the first vector: the doc and the code agree.
    @Test(.enabled(if: python3 != nil, "python3 is not installed"))
    func pythonSnippetInTheDocReproducesTheFirstVector() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let doc = try String(contentsOf: root.appendingPathComponent("docs/key-seeds.md"), encoding: .utf8)
        let start = try #require(doc.range(of: "```python\n"))
        let end = try #require(doc.range(of: "```", range: start.upperBound..<doc.endIndex))
        let snippet = String(doc[start.upperBound..<end.lowerBound])
        let result = try await ProcessRunner.run(URL(fileURLWithPath: try #require(Self.python3)), ["-c", snippet], timeout: .seconds(120))
        #expect(result.succeeded, "\(result.stderrText)")
        let data = result.stdout
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines == ["key 5bd2de00f6aaf95087414346767cbb84", "iv 3235e2aef1b100678947b0d34b7b8fa0"])
    }
}
