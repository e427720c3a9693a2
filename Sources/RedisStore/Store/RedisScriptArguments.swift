/// A script call's KEYS and ARGV written straight into their wire form (``RedisCommandEncoder``),
/// each under the name the script's header gives it.
///
/// The names cost nothing on the way to Redis: they are static strings, kept only when a test asks
/// (``RedisScriptCall/encodedNames``). Keys come first, then the named arguments, then any variable
/// tail (repeated entries the script reads with a cursor from `ARGV[tail]` on).
struct RedisScriptArguments: Sendable {
    /// What a call wrote, by name and in order.
    struct Names: Sendable, Equatable {
        /// Names of the KEYS, `KEYS[1]` first.
        var keys: [String] = []
        /// Names of the fixed ARGV entries, `ARGV[1]` first.
        var arguments: [String] = []
        /// Names of the variable tail's entries, in order (one per entry written, repeats included).
        var tail: [String] = []
        /// Keys written after an argument. Empty for a well-formed call. (An argument written after
        /// ``RedisScriptArguments/beginTail()`` is a tail entry: missing from ``arguments``, it fails
        /// the comparison with the header.)
        var outOfOrder: [String] = []
    }

    private enum Part: Int, Sendable {
        case keys, arguments, tail
    }

    private(set) var encoder: RedisCommandEncoder
    private(set) var names: Names?
    private var part = Part.keys

    init(keyCount: Int, capacity: Int, recordingNames: Bool = false) {
        encoder = RedisCommandEncoder.script(keyCount: keyCount, capacity: capacity)
        names = recordingNames ? Names() : nil
    }

    /// The variable tail starts: what is written from here on is read by position, not by name.
    mutating func beginTail() { part = .tail }

    /// A key made of an account's shared prefix, a fixed part and an optional variable tail.
    mutating func key(_ name: StaticString, _ prefix: [UInt8], _ middle: StaticString, _ tail: String = "") {
        record(name, as: .keys)
        encoder.append(prefix, middle, tail)
    }

    mutating func key(_ name: StaticString, _ key: RedisArgument) {
        record(name, as: .keys)
        encoder.append(key)
    }

    /// An integer in decimal.
    mutating func argument<Integer: SignedInteger & FixedWidthInteger>(_ name: StaticString, _ value: Integer) {
        record(name, as: .arguments)
        encoder.append(value)
    }

    mutating func argument(_ name: StaticString, _ value: String) {
        record(name, as: .arguments)
        encoder.append(value)
    }

    mutating func argument(_ name: StaticString, _ value: RedisArgument) {
        record(name, as: .arguments)
        encoder.append(value)
    }

    mutating func argument(_ name: StaticString, bytes value: [UInt8]) {
        record(name, as: .arguments)
        encoder.append(bytes: value)
    }

    /// Bytes as lower-case hex digits.
    mutating func argument(_ name: StaticString, hex value: [UInt8]) {
        record(name, as: .arguments)
        encoder.append(hex: value)
    }

    private mutating func record(_ name: StaticString, as written: Part) {
        guard names != nil else { return }
        // Named arguments after ``beginTail()`` belong to the tail.
        let written = written == .arguments && part == .tail ? Part.tail : written
        if written.rawValue < part.rawValue { names?.outOfOrder.append(name.description) }
        if written.rawValue > part.rawValue { part = written }
        switch written {
        case .keys: names?.keys.append(name.description)
        case .arguments: names?.arguments.append(name.description)
        case .tail: names?.tail.append(name.description)
        }
    }
}
