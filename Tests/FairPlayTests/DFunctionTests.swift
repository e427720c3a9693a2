import FairPlay
import Foundation
import Testing
import Wire

@Suite struct DFunctionTests {
    /// Rows of the table in ../shared/vectors/dfunction-vectors.md.
    static func rows() throws -> [(r2: String, hash: String)] {
        let text = try String(contentsOf: Fixtures.shared.appendingPathComponent("vectors/dfunction-vectors.md"), encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 2, cells[1].count == 32, [UInt8](hexString: cells[0]) != nil else { return nil }
            return (cells[0], cells[1])
        }
    }

    @Test("H(R2) reproduces every published vector")
    func hashMatchesVectors() throws {
        let rows = try Self.rows()
        #expect(rows.count == 16)
        for row in rows {
            #expect(try DFunction.hash(r2: [UInt8](hexString: row.r2)!).hexString == row.hash, "R2 \(row.r2)")
        }
    }

    @Test("DASk is AES-128-ECB of H(R2) under the ASk")
    func daskIsECBOfHash() throws {
        let r2 = [UInt8](hexString: "a4c411c54d94727143504aece5613da8c6ee6dd2")!
        let ask = [UInt8](repeating: 0x42, count: 16)
        let expected = try FairPlayCrypto.aes128ECBEncrypt(key: ask, [UInt8](hexString: "3a24a068c116842f10fac5c86cb1cb5c")!)
        #expect(try DFunction.derivedApplicationSecretKey(r2: r2, ask: ask) == expected)
    }

    @Test("R2 outside 1...55 bytes and a short ASk are parameter errors")
    func badInputs() {
        #expect(throws: FairPlayError.self) { try DFunction.hash(r2: []) }
        #expect(throws: FairPlayError.self) { try DFunction.hash(r2: [UInt8](repeating: 1, count: 56)) }
        #expect(throws: FairPlayError.self) { try DFunction.derivedApplicationSecretKey(r2: [1, 2], ask: [1]) }
    }
}
