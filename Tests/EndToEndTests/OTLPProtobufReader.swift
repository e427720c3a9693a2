import Licensing
import Wire

/// Reads an OTLP `ExportTraceServiceRequest` in protobuf (what swift-otel sends by default) into the
/// shape of OTLP JSON (`resourceSpans[].scopeSpans[].spans[]`, hex IDs, string nanoseconds, integer
/// enums), so the fleet test checks both encodings with one set of assertions.
///
/// Only the fields the test reads are kept; others are skipped by wire type. swift-otel's generated
/// OTLP types are `package`-internal, hence this small reader of the protobuf wire format.
struct OTLPProtobufReader {
    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    /// One field: its number and its value (varint and fixed values as integers, the rest as bytes).
    private enum Value {
        case integer(UInt64)
        case bytes(ArraySlice<UInt8>)
    }

    /// The request as OTLP JSON would spell it.
    static func request(_ bytes: [UInt8]) throws -> JSONValue {
        let resourceSpans = try fields(bytes[...]).compactMap { number, value -> JSONValue? in
            guard number == 1, case .bytes(let message) = value else { return nil }
            return try resourceSpan(message)
        }
        return .object(["resourceSpans": .array(resourceSpans)])
    }

    private static func resourceSpan(_ bytes: ArraySlice<UInt8>) throws -> JSONValue {
        var attributes: [JSONValue] = []
        var scopes: [JSONValue] = []
        for (number, value) in try fields(bytes) {
            guard case .bytes(let message) = value else { continue }
            if number == 1 {
                attributes = try fields(message).compactMap { number, value in
                    guard number == 1, case .bytes(let keyValue) = value else { return nil }
                    return try self.keyValue(keyValue)
                }
            } else if number == 2 {
                let spans = try fields(message).compactMap { number, value -> JSONValue? in
                    guard number == 2, case .bytes(let span) = value else { return nil }
                    return try self.span(span)
                }
                scopes.append(.object(["spans": .array(spans)]))
            }
        }
        return .object(["resource": .object(["attributes": .array(attributes)]), "scopeSpans": .array(scopes)])
    }

    private static func span(_ bytes: ArraySlice<UInt8>) throws -> JSONValue {
        var members: [String: JSONValue] = [:]
        var attributes: [JSONValue] = []
        var events: [JSONValue] = []
        for (number, value) in try fields(bytes) {
            switch (number, value) {
            case (1, .bytes(let id)): members["traceId"] = .string(hex(id))
            case (2, .bytes(let id)): members["spanId"] = .string(hex(id))
            case (3, .bytes(let state)) where !state.isEmpty: members["traceState"] = .string(String(decoding: state, as: UTF8.self))
            case (4, .bytes(let id)) where !id.isEmpty: members["parentSpanId"] = .string(hex(id))
            case (5, .bytes(let name)): members["name"] = .string(String(decoding: name, as: UTF8.self))
            case (6, .integer(let kind)): members["kind"] = .integer(Int64(kind))
            case (7, .integer(let nanos)): members["startTimeUnixNano"] = .string(String(nanos))
            case (8, .integer(let nanos)): members["endTimeUnixNano"] = .string(String(nanos))
            case (9, .bytes(let keyValue)): attributes.append(try self.keyValue(keyValue))
            case (11, .bytes(let event)):
                let name = try fields(event).first { $0.0 == 2 }.flatMap { field -> String? in
                    guard case .bytes(let text) = field.1 else { return nil }
                    return String(decoding: text, as: UTF8.self)
                }
                events.append(.object(["name": .string(name ?? "")]))
            case (15, .bytes(let status)):
                var code: Int64 = 0
                for case (3, .integer(let value)) in try fields(status) { code = Int64(value) }
                members["status"] = .object(code == 0 ? [:] : ["code": .integer(code)])
            default: continue
            }
        }
        members["attributes"] = .array(attributes)
        members["events"] = .array(events)
        return .object(members)
    }

    /// `{"key": k, "value": {"stringValue"|"boolValue"|"intValue"|"doubleValue": v}}`.
    private static func keyValue(_ bytes: ArraySlice<UInt8>) throws -> JSONValue {
        var key = ""
        var value: [String: JSONValue] = [:]
        for (number, field) in try fields(bytes) {
            if number == 1, case .bytes(let text) = field { key = String(decoding: text, as: UTF8.self) }
            guard number == 2, case .bytes(let any) = field else { continue }
            for (kind, inner) in try fields(any) {
                switch (kind, inner) {
                case (1, .bytes(let text)): value["stringValue"] = .string(String(decoding: text, as: UTF8.self))
                case (2, .integer(let flag)): value["boolValue"] = .bool(flag != 0)
                case (3, .integer(let number)): value["intValue"] = .string(String(Int64(bitPattern: number)))
                case (4, .integer(let bits)): value["doubleValue"] = .number(Double(bitPattern: bits))
                default: continue
                }
            }
        }
        return .object(["key": .string(key), "value": .object(value)])
    }

    /// Every field of one message, in order.
    private static func fields(_ bytes: ArraySlice<UInt8>) throws -> [(Int, Value)] {
        var rest = bytes
        var out: [(Int, Value)] = []
        while !rest.isEmpty {
            let tag = try varint(&rest)
            let number = Int(tag >> 3)
            switch tag & 7 {
            case 0: out.append((number, .integer(try varint(&rest))))
            case 1: out.append((number, .integer(try fixed(&rest, 8))))
            case 5: out.append((number, .integer(try fixed(&rest, 4))))
            case 2:
                let length = try varint(&rest)
                guard let count = Int(exactly: length), count <= rest.count else { throw Malformed(description: "length \(length) past the end") }
                out.append((number, .bytes(rest.prefix(count))))
                rest = rest.dropFirst(count)
            default: throw Malformed(description: "wire type \(tag & 7) in field \(number)")
            }
        }
        return out
    }

    private static func varint(_ bytes: inout ArraySlice<UInt8>) throws -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while let byte = bytes.popFirst() {
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
            guard shift < 64 else { break }
        }
        throw Malformed(description: "truncated varint")
    }

    /// A little-endian fixed32 or fixed64.
    private static func fixed(_ bytes: inout ArraySlice<UInt8>, _ size: Int) throws -> UInt64 {
        guard bytes.count >= size else { throw Malformed(description: "truncated fixed\(size * 8)") }
        let value = bytes.prefix(size).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        bytes = bytes.dropFirst(size)
        return value
    }

    private static func hex(_ bytes: ArraySlice<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes { out += [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]] }
        return String(decoding: out, as: UTF8.self)
    }
}
