import Foundation
import KSMTestSupport
import Testing
import Wire

@Suite("Base64")
struct Base64Tests {
    @Test("encodes RFC 4648's test vectors and decodes them back")
    func rfcVectors() {
        let vectors = [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy")]
        for (plain, encoded) in vectors {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(Base64.decode(encoded) == Array(plain.utf8))
        }
    }

    @Test("agrees with Foundation on 5,000 random byte strings of every length up to 3 KB")
    func agreesWithFoundationOnRandomBytes() {
        var random = SplitMix64(state: 0xB64)
        for round in 0..<5_000 {
            let count = round < 64 ? round : Int(random.next() % 3_000)
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
            let encoded = Base64.encode(bytes)
            #expect(encoded == Data(bytes).base64EncodedString())
            #expect(Base64.decode(encoded) == bytes)
            #expect(Base64.decode(Array(encoded.utf8)[...]) == bytes)
        }
    }

    @Test("refuses what the job schema refuses: wrong length, stray padding, white space, other alphabets")
    func refusesMalformed() {
        for text in ["Q", "QQ", "QQ=", "Q===", "====", "QQ==QQ==", "QQ=A", " QUJD", "QU JD", "QUJD\n", "QU-D", "QU_D", "QUJ\u{e9}"] {
            #expect(Base64.decode(text) == nil, "\(text)")
        }
    }

    @Test("accepts or refuses 20,000 mutants of an SPC's base64 exactly as Foundation does, except '=' inside")
    func agreesWithFoundationOnMutants() {
        var random = SplitMix64(state: 0x5BC)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/= \n-_.".utf8)
        let original = Array(Base64.encode((0..<2_100).map { UInt8(truncatingIfNeeded: $0 &* 31) }).utf8)
        for _ in 0..<20_000 {
            var text = original
            for _ in 0..<(1 + Int(random.next() % 3)) {
                let at = Int(random.next() % UInt64(text.count))
                switch random.next() % 3 {
                case 0: text[at] = alphabet[Int(random.next() % UInt64(alphabet.count))]
                case 1: text.remove(at: at)
                default: text.insert(alphabet[Int(random.next() % UInt64(alphabet.count))], at: at)
                }
            }
            let ours = Base64.decode(text)
            let foundation = String(bytes: text, encoding: .utf8).flatMap { Data(base64Encoded: $0) }.map { Array($0) }
            // Foundation accepts a '=' followed by more symbols in the last group ("QQ=A"); this
            // decoder refuses any '=' that is not trailing padding.
            let lastGroup = text.suffix(4)
            if let padding = lastGroup.firstIndex(of: UInt8(ascii: "=")), lastGroup[padding...].contains(where: { $0 != UInt8(ascii: "=") }) {
                #expect(ours == nil)
            } else {
                #expect(ours == foundation, "\(String(decoding: text, as: UTF8.self))")
            }
        }
    }
}
