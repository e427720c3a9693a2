import Testing
import Wire

@Suite("JSON fields: typed members named by their dotted path")
struct JSONFieldsTests {
    static func fields(_ text: String) throws -> JSONFields {
        try JSONFields(try JSONValue(parsing: Array(text.utf8)))
    }

    @Test("absent and null members read as nil; present ones as their type")
    func absentNullPresent() throws {
        let f = try Self.fields(#"{"s": "x", "b": true, "i": 7, "n": null, "o": {"k": 1}, "a": [1, 2]}"#)
        #expect(try f.string("s") == "x")
        #expect(try f.bool("b") == true)
        #expect(try f.integer("i", in: 0...10) == 7)
        #expect(try f.string("n") == nil)
        #expect(try f.string("missing") == nil)
        #expect(try f.array("a") == [.integer(1), .integer(2)])
        #expect(try f.object("o")?.integer("k", in: 0...1) == 1)
    }

    @Test(
        "a wrong type, a value out of range, a fraction, an unknown choice and a missing required member each name the field and say why",
        arguments: [
            (#"{"s": 1}"#, "s", "must be a string, not integer"),
            (#"{"b": "yes"}"#, "b", "must be true or false, not string"),
            (#"{"i": 11}"#, "i", "must be an integer in 0...10, got 11"),
            (#"{"i": 1.5}"#, "i", "must be an integer in 0...10, not a fraction"),
            (#"{"c": "blue"}"#, "c", "must be one of red or green"),
            (#"{"o": {"k": "x"}}"#, "o.k", "must be an integer in 0...10, not string"),
            (#"{"o": []}"#, "o", "must be an object, not array"),
            ("{}", "r", "required field is missing"),
        ])
    func errors(document: String, field: String, reason: String) throws {
        let f = try Self.fields(document)
        #expect(throws: JSONFieldError(field: field, reason: reason)) {
            _ = try f.string("s")
            _ = try f.bool("b")
            _ = try f.integer("i", in: 0...10)
            _ = try f.choice("c", "red or green") { ["red", "green"].contains($0) ? $0 : nil }
            _ = try f.object("o")?.integer("k", in: 0...10)
            _ = try f.required("r", f.string)
        }
    }

    @Test("a document that is not an object is refused as a whole")
    func notAnObject() throws {
        #expect(throws: JSONFieldError(field: "", reason: "must be a JSON object, not array")) { try JSONFields(.array([])) }
        #expect(JSONFieldError(field: "", reason: "must be a JSON object, not array").description == "document must be a JSON object, not array")
        #expect(JSONFieldError(field: "a.b", reason: "is bad").description == #""a.b" is bad"#)
    }

    @Test("an integer's own wording replaces the range in its error")
    func expectedWording() throws {
        let f = try Self.fields(#"{"deadline": -5}"#)
        #expect(throws: JSONFieldError(field: "deadline", reason: "must be a non-negative epoch, got -5")) {
            try f.integer("deadline", in: 0...Int64.max, expected: "a non-negative epoch")
        }
    }
}
