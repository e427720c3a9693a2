import Foundation
import Testing
import Wire

@Suite("JSON writer member by member, and the parser's trailing commas")
struct JSONWriterTests {
    static func text(_ writer: JSONWriter) -> String { String(decoding: writer.bytes, as: UTF8.self) }

    @Test("escapes a quote, a backslash and every control character, and nothing else")
    func escapes() throws {
        var w = JSONWriter()
        w.write(string: "say \"hi\" \\ to / café 😀 \u{7F}")
        #expect(Self.text(w) == #""say \"hi\" \\ to / café 😀 \#u{7F}""#)

        let controls = String(decoding: (0..<0x20).map { UInt8($0) }, as: UTF8.self)
        var c = JSONWriter()
        c.write(string: controls)
        let expected = (0..<0x20).map { byte -> String in
            switch byte {
            case 0x08: #"\b"#
            case 0x09: #"\t"#
            case 0x0A: #"\n"#
            case 0x0C: #"\f"#
            case 0x0D: #"\r"#
            default: #"\u00"# + String(format: "%02x", byte)
            }
        }.joined()
        #expect(Self.text(c) == "\"" + expected + "\"")
        // Each escape reads back as the character it stands for, by our parser and by Foundation's.
        #expect(try JSONValue(parsing: c.bytes) == .string(controls))
        #expect(try JSONSerialization.jsonObject(with: Data(c.bytes), options: [.fragmentsAllowed]) as? String == controls)
    }

    @Test("an escape at every offset of a long string: the plain runs around it are copied whole")
    func escapeAtEveryOffset() throws {
        for position in 0..<40 {
            for special in ["\"", "\\", "\n", "\u{01}"] {
                var text = String(repeating: "a", count: 40)
                text.insert(contentsOf: special, at: text.index(text.startIndex, offsetBy: position))
                var w = JSONWriter()
                w.write(string: text)
                #expect(try JSONValue(parsing: w.bytes) == .string(text), "\(special.debugDescription) at \(position)")
            }
        }
    }

    @Test("nested objects and arrays member by member: commas in the right places, keys in the order written")
    func nests() throws {
        var w = JSONWriter()
        w.beginObject()
        w.key("z")
        w.write(integer: -1)
        w.key("a")
        w.beginObject()
        w.key("empty")
        w.beginObject()
        w.endObject()
        w.key("list")
        w.beginArray()
        w.write(bool: true)
        w.beginObject()
        w.key("k")
        w.writeNull()
        w.endObject()
        w.beginArray()
        w.endArray()
        w.write(JSONValue.object(["y": .integer(2), "x": .integer(1)]))
        w.write(string: "s")
        w.endArray()
        w.endObject()
        w.key("m")
        w.write(base64: [1, 2, 3, 4])
        w.endObject()
        #expect(Self.text(w) == #"{"z":-1,"a":{"empty":{},"list":[true,{"k":null},[],{"x":1,"y":2},"s"]},"m":"AQIDBA=="}"#)
        w.newline()
        #expect(w.bytes.last == 0x0A)
    }

    @Test("keys written in UTF-8 order give the bytes of the sorted tree")
    func memberByMemberEqualsTree() {
        var w = JSONWriter()
        w.beginObject()
        w.key("a")
        w.beginArray()
        w.write(integer: 1)
        w.write(integer: 2)
        w.endArray()
        w.key("b")
        w.beginObject()
        w.key("c")
        w.write(string: "d")
        w.endObject()
        w.key("e")
        w.write(bool: false)
        w.endObject()
        let tree = JSONValue.object(["e": .bool(false), "b": .object(["c": .string("d")]), "a": .array([.integer(1), .integer(2)])])
        #expect(w.bytes == tree.encoded())
    }

    @Test("integers at their limits, all 64 bits unsigned, and upper-case hex")
    func numbersAndHex() {
        var w = JSONWriter()
        w.beginArray()
        for value in [Int64.min, -1, 0, 9, 10, Int64.max] { w.write(integer: value) }
        for value in [UInt64(0), 1_000_000, UInt64.max] { w.write(unsigned: value) }
        w.write(upperHex: [0x00, 0xAB, 0x0F])
        w.write(upperHex: 0xF0100, digits: 8)
        w.write(upperHex: 0x32F0_0049_66A5_C4F8, digits: 16)
        w.write(upperHex: 0, digits: 8)
        w.write(upperHex: 0x1_0000_0000, digits: 8)
        w.write(upperHex: 0xAB, digits: 20)
        w.endArray()
        #expect(
            Self.text(w)
                == #"[-9223372036854775808,-1,0,9,10,9223372036854775807,0,1000000,18446744073709551615,"00AB0F","000F0100","32F0004966A5C4F8","00000000","100000000","000000000000000000AB"]"#
        )
    }

    @Test(
        "trailing commas: refused by default, one allowed on request",
        arguments: [
            (#"[1, 2,]"#, JSONValue.array([.integer(1), .integer(2)])),
            ("{\"a\": [ {\"b\": 1,\n },\n ],\n}", .object(["a": .array([.object(["b": .integer(1)])])])),
            (#"{"s": ",]"  ,  }"#, .object(["s": .string(",]")])),
        ])
    func trailingCommas(text: String, expected: JSONValue) throws {
        #expect(throws: JSONParser.Error.self) { try JSONParser.parse(Array(text.utf8)) }
        #expect(try JSONParser.parse(Array(text.utf8), allowingTrailingCommas: true) == expected)
    }

    @Test(
        "trailing commas allowed still refuse an empty list with a comma, two commas, and a comma alone",
        arguments: [
            ("[,]", "unexpected character", 1),
            ("{,}", "expected a string key", 1),
            ("[1,,]", "unexpected character", 3),
            ("{\"a\":1,,}", "expected a string key", 7),
            (",", "unexpected character", 0),
            ("[1,", "unexpected end of input", 3),
        ])
    func trailingCommaErrors(text: String, reason: String, offset: Int) {
        #expect(throws: JSONParser.Error(offset: offset, reason: reason)) { try JSONParser.parse(Array(text.utf8), allowingTrailingCommas: true) }
    }
}

@Suite("JSON writer, indented")
struct JSONWriterIndentedTests {
    @Test("indents two spaces a level, sorts keys, keeps empty containers on one line, and reads back as the same value")
    func indented() throws {
        let value = JSONValue.object([
            "b": .array([.integer(1), .object(["y": .bool(true), "x": .null])]), "a": .string("s/é"), "e": .array([]), "o": .object([:]),
        ])
        var w = JSONWriter()
        w.writeIndented(value)
        let text = String(decoding: w.bytes, as: UTF8.self)
        #expect(
            text == """
                {
                  "a": "s/é",
                  "b": [
                    1,
                    {
                      "x": null,
                      "y": true
                    }
                  ],
                  "e": [],
                  "o": {}
                }
                """)
        #expect(try JSONValue(parsing: w.bytes) == value)
    }
}
