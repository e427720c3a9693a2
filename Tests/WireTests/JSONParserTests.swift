import Foundation
import KSMTestSupport
import Testing
import Wire

@Suite("JSON parser and writer")
struct JSONParserTests {
    @Test("parses every JSON type, integers exactly and other numbers as doubles")
    func parsesTypes() throws {
        let value = try JSONValue(
            parsing: Array(#" {"a": [1, -0, 9223372036854775807, 9223372036854775808, 1.5, 2e3, true, false, null], "b": "x\u00e9\ud83d\ude00\n\"/"} "#.utf8))
        guard case .object(let o) = value, case .array(let a)? = o["a"] else {
            Issue.record("not an object with an array")
            return
        }
        #expect(
            a == [.integer(1), .integer(0), .integer(.max), .number(9_223_372_036_854_775_808), .number(1.5), .number(2000), .bool(true), .bool(false), .null])
        #expect(o["b"] == .string("xé😀\n\"/"))
    }

    @Test(
        "refuses each kind of malformed input with its reason and offset",
        arguments: [
            ("", "unexpected end of input", 0),
            ("{", "unexpected end of input in an object", 1),
            ("{\"a\":1,}", "expected a string key", 7),
            ("[1,]", "unexpected character", 3),
            ("{\"a\":1 \"b\":2}", "expected ',' or '}' in an object", 7),
            ("{\"a\":1,\"a\":2}", "duplicate key", 7),
            ("01", "leading zero in a number", 0),
            ("1.", "invalid fraction", 0),
            ("1e", "invalid exponent", 0),
            ("-", "invalid number", 0),
            ("1e999", "number out of range", 0),
            ("\"a\u{01}\"", "control character in a string", 2),
            ("\"\\x\"", "invalid escape", 3),
            ("\"\\ud800\"", "unpaired surrogate", 7),
            ("\"\\udc00\"", "unpaired surrogate", 7),
            ("\"abc", "unterminated string", 4),
            ("tru", "unexpected end of input", 0),
            ("nul1", "invalid literal", 0),
            ("{} x", "unexpected data after the document", 3),
            ("'a'", "unexpected character", 0),
        ])
    func refusesMalformed(input: String, reason: String, offset: Int) {
        #expect(throws: JSONParser.Error(offset: offset, reason: reason)) { try JSONValue(parsing: Array(input.utf8)) }
    }

    @Test("refuses invalid UTF-8 inside a string")
    func refusesInvalidUTF8() {
        #expect(throws: JSONParser.Error.self) { try JSONValue(parsing: [0x22, 0xC3, 0x28, 0x22]) }
        #expect(throws: JSONParser.Error.self) { try JSONValue(parsing: [0x22, 0xED, 0xA0, 0x80, 0x22]) }
    }

    @Test("finds a quote, escape, control byte or non-ASCII byte at every position of a long string")
    func scansEveryPosition() throws {
        // The scanner reads eight bytes at a time: put each kind of byte at each offset of three words.
        for position in 0..<24 {
            var plain = Array(repeating: UInt8(ascii: "A"), count: 30)
            plain[position] = UInt8(ascii: "\\")
            plain.insert(UInt8(ascii: "n"), at: position + 1)
            var expected = Array(repeating: UInt8(ascii: "A"), count: 29)
            expected.insert(0x0A, at: position)
            #expect(try JSONValue(parsing: [0x22] + plain + [0x22]) == .string(String(decoding: expected, as: UTF8.self)), "escape at \(position)")

            var control = Array(repeating: UInt8(ascii: "A"), count: 30)
            control[position] = 0x1F
            #expect(throws: JSONParser.Error(offset: position + 1, reason: "control character in a string")) {
                try JSONValue(parsing: [0x22] + control + [0x22])
            }

            var accented = Array(repeating: UInt8(ascii: "A"), count: 30)
            accented.replaceSubrange(position..<position + 2, with: [0xC3, 0xA9])
            #expect(try JSONValue(parsing: [0x22] + accented + [0x22]) == .string(String(decoding: accented, as: UTF8.self)), "é at \(position)")
            var broken = accented
            broken[position + 1] = 0x28
            #expect(throws: JSONParser.Error.self, "bad UTF-8 at \(position)") { try JSONValue(parsing: [0x22] + broken + [0x22]) }

            let short = Array(repeating: UInt8(ascii: "B"), count: position)
            #expect(try JSONValue(parsing: [0x22] + short + [0x22, 0x20]) == .string(String(repeating: "B", count: position)))
            #expect(throws: JSONParser.Error(offset: position + 1, reason: "unterminated string")) { try JSONValue(parsing: [0x22] + short) }
        }
    }

    @Test("bounds nesting depth instead of exhausting the stack")
    func boundsDepth() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONParser.Error(offset: 64, reason: "nesting deeper than 64")) { try JSONValue(parsing: Array(deep.utf8)) }
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        _ = try JSONValue(parsing: Array(ok.utf8))
    }

    @Test("writes compact JSON with sorted keys and minimal escapes, and reads it back")
    func writesAndRoundTrips() throws {
        let value = JSONValue.object([
            "z": .array([.integer(-3), .number(0.25), .null, .bool(true)]),
            "a": .string("skd://x/y \"q\" \\ \u{01}\té"),
            "m": .object([:]),
        ])
        let bytes = value.encoded()
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"a":"skd://x/y \"q\" \\ \u0001\té","m":{},"z":[-3,0.25,null,true]}"#)
        #expect(try JSONValue(parsing: bytes) == value)
    }

    @Test("agrees with Foundation on accept or refuse for 20,000 mutants of a job document, with or without the SPC read in place")
    func agreesWithFoundation() {
        let seed = Array(
            #"{"id":"j-1","tenant":"acme","account":"a1","spc":"AAECAw==","deadline":1790000000000,"priority":"new","x":[1.5,true,null,{"k":"\u00e9"}]}"#.utf8)
        var generator = SplitMix64(state: 42)
        var disagreements: [String] = []
        let alphabet = Array("{}[]\",:\\ 0123456789.eE+-truefalsnl\u{01}".utf8) + [0xC3, 0xA9, 0xFF]
        for _ in 0..<20_000 {
            var mutant = seed
            for _ in 0..<(1 + Int(generator.next() % 3)) {
                let at = Int(generator.next() % UInt64(mutant.count))
                switch generator.next() % 3 {
                case 0: mutant.remove(at: at)
                case 1: mutant.insert(alphabet[Int(generator.next() % UInt64(alphabet.count))], at: at)
                default: mutant[at] = alphabet[Int(generator.next() % UInt64(alphabet.count))]
                }
                if mutant.isEmpty { mutant = [0x20] }
            }
            let parsed = Result { () throws(JSONParser.Error) in try JSONValue(parsing: mutant) }
            let ours = (try? parsed.get()) != nil
            // Reading "spc" in place changes nothing: the same error, or the same document once its
            // raw bytes are put back as the string they are.
            let withRaw = Result { () throws(JSONParser.Error) in try JSONParser.parse(mutant, rawStringMember: "spc") }
            switch (parsed, withRaw) {
            case (.success(let value), .success(let (rawValue, raw))):
                var restored = rawValue
                if let raw, case .object(var members) = rawValue {
                    members["spc"] = .string(String(decoding: raw, as: UTF8.self))
                    restored = .object(members)
                }
                if restored != value { disagreements.append("raw member: " + String(decoding: mutant, as: UTF8.self)) }
            case (.failure(let error), .failure(let rawError)):
                if error != rawError { disagreements.append("raw member error: " + String(decoding: mutant, as: UTF8.self)) }
            default:
                disagreements.append("raw member verdict: " + String(decoding: mutant, as: UTF8.self))
            }
            let foundation = (try? JSONSerialization.jsonObject(with: Data(mutant), options: [.fragmentsAllowed])) != nil
            // Stricter on purpose: duplicate keys, and trailing commas (Foundation accepts those).
            let strictOnPurpose = foundation && !ours && (Self.hasDuplicateKey(mutant) || Self.acceptedWithoutTrailingCommas(mutant))
            if ours != foundation, !strictOnPurpose {
                disagreements.append(String(decoding: mutant, as: UTF8.self))
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(5))")
    }

    private static func acceptedWithoutTrailingCommas(_ bytes: [UInt8]) -> Bool {
        let text = String(decoding: bytes, as: UTF8.self).replacing(/,\s*([}\]])/) { String($0.output.1) }
        return (try? JSONValue(parsing: Array(text.utf8))) != nil
    }

    private static func hasDuplicateKey(_ bytes: [UInt8]) -> Bool {
        if case .some(let error) = Result(catching: { () throws(JSONParser.Error) in try JSONValue(parsing: bytes) }).error {
            return error.reason == "duplicate key"
        }
        return false
    }

    @Test("a plain top-level string member comes back as bytes of the input; everything else parses as usual")
    func rawStringMember() throws {
        let text = #" {"spc": "QUJD+/==", "id": "x", "inner": {"spc": "nested"}} "#
        let (value, raw) = try JSONParser.parse(Array(text.utf8), rawStringMember: "spc")
        #expect(raw.map { String(decoding: $0, as: UTF8.self) } == "QUJD+/==")
        guard case .object(let o) = value else {
            Issue.record("not an object")
            return
        }
        #expect(o["spc"] == .string(""))
        #expect(o["id"] == .string("x"))
        #expect(o["inner"] == .object(["spc": .string("nested")]))
    }

    @Test(
        "a member that is not a plain ASCII string is parsed normally, not returned raw",
        arguments: [
            (#"{"spc": "A\/=="}"#, JSONValue.string("A/==")),
            ("{\"spc\": \"café\"}", .string("café")),
            (#"{"spc": 12}"#, .integer(12)),
            (#"{"spc": null}"#, .null),
            (#"{"spc": ["AAAA"]}"#, .array([.string("AAAA")])),
        ])
    func rawStringMemberFallsBack(text: String, expected: JSONValue) throws {
        let (value, raw) = try JSONParser.parse(Array(text.utf8), rawStringMember: "spc")
        #expect(raw == nil)
        #expect(value == .object(["spc": expected]))
        #expect(value == (try JSONValue(parsing: Array(text.utf8))))
    }

    @Test(
        "asking for a raw member changes no verdict: the same errors at the same offsets",
        arguments: [
            #"{"spc":"AAAA","spc":"BBBB"}"#, #"{"spc":"AAAA"} x"#, #"{"spc":"AAAA"#, "{\"spc\":\"AA\u{01}AA\"}", #"{"spc":"AAAA",}"#,
            #"{"spc":"\x"}"#,
        ])
    func rawStringMemberKeepsErrors(text: String) {
        let plain = Result { () throws(JSONParser.Error) in try JSONValue(parsing: Array(text.utf8)) }
        let raw = Result { () throws(JSONParser.Error) in try JSONParser.parse(Array(text.utf8), rawStringMember: "spc").value }
        #expect(plain.error != nil)
        #expect(raw.error == plain.error)
    }

}

extension Result {
    var error: Failure? { if case .failure(let e) = self { e } else { nil } }
}
