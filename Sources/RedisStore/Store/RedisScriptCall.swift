/// One call of a Lua script as a value: named, typed fields that write themselves into the script's
/// KEYS and ARGV.
///
/// The script's source opens with a header that names every key and argument once, in order
/// (`local slots_key = KEYS[1]`, `local now_ms = ARGV[1]`), and the body uses only those names.
/// ``encode(into:)`` writes each value under the same name, so a test can hold the two lists side
/// by side (``RedisScriptArguments/Names``): a field added, dropped or moved on one side only fails
/// there instead of reaching Redis as a shifted `ARGV`.
protocol RedisScriptCall: Sendable {
    /// The script this call runs.
    static var script: RedisScript { get }
    /// How many of the values ``encode(into:)`` writes are KEYS; the rest are ARGV.
    static var keyCount: Int { get }
    /// Bytes to reserve for the encoded call, so the common call grows its buffer at most once.
    var encodedCapacity: Int { get }
    /// Writes the keys, then the arguments, each under its header name.
    func encode(into arguments: inout RedisScriptArguments)
}

extension RedisScriptCall {
    var encodedCapacity: Int { 256 }

    /// The call as a pipeline command (`EVALSHA`, `EVAL` on `NOSCRIPT`).
    var command: RedisCommand {
        var arguments = RedisScriptArguments(keyCount: Self.keyCount, capacity: encodedCapacity)
        encode(into: &arguments)
        return .evalScript(Self.script, encoded: arguments.encoder)
    }

    /// The names ``encode(into:)`` writes, in order: what the script's header must declare.
    var encodedNames: RedisScriptArguments.Names {
        var arguments = RedisScriptArguments(keyCount: Self.keyCount, capacity: encodedCapacity, recordingNames: true)
        encode(into: &arguments)
        return arguments.names ?? RedisScriptArguments.Names()
    }
}
