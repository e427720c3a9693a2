/// One command in a pipeline: plain arguments, or a script call (`EVALSHA` with `NOSCRIPT` fallback).
/// The arguments are encoded once, when the command is made (``RedisCommandEncoder``).
public struct RedisCommand: Sendable {
    enum Kind: Sendable {
        case plain
        case script(RedisScript)
    }

    let kind: Kind
    /// The encoded arguments; for a script, from the key count on.
    let arguments: RedisCommandEncoder
    /// Written right after `ASKING` on the same connection: the cluster client's resend after an
    /// `ASK` redirect. The connection reads and drops the `ASKING` reply, so replies stay one per command.
    private(set) var isAsking = false

    /// A plain command such as `["SET", "k", "v"]`.
    package init(_ arguments: [RedisArgument]) {
        var encoder = RedisCommandEncoder(capacity: arguments.reduce(16) { $0 + $1.bytes.count + 16 })
        for argument in arguments { encoder.append(argument) }
        self.init(kind: .plain, arguments: encoder)
    }

    /// A plain command whose arguments, command name first, were written into `encoder`.
    package init(_ encoder: RedisCommandEncoder) {
        self.init(kind: .plain, arguments: encoder)
    }

    /// A script call; `keys` are the script's `KEYS`, `arguments` its `ARGV`.
    package static func evalScript(_ script: RedisScript, keys: [RedisArgument], arguments: [RedisArgument]) -> RedisCommand {
        var encoder = RedisCommandEncoder.script(keyCount: keys.count)
        for key in keys { encoder.append(key) }
        for argument in arguments { encoder.append(argument) }
        return RedisCommand(kind: .script(script), arguments: encoder)
    }

    /// A script call whose key count, keys and arguments were written into `encoder`, which
    /// ``RedisCommandEncoder/script(keyCount:capacity:)`` started.
    package static func evalScript(_ script: RedisScript, encoded encoder: RedisCommandEncoder) -> RedisCommand {
        RedisCommand(kind: .script(script), arguments: encoder)
    }

    private init(kind: Kind, arguments: RedisCommandEncoder) {
        self.kind = kind
        self.arguments = arguments
    }

    /// This command preceded by `ASKING` (one redirect to a slot being imported).
    func asking() -> RedisCommand {
        var command = self
        command.isAsking = true
        return command
    }

    /// The command name in upper case (`EVALSHA` for a script call).
    var name: String {
        guard case .plain = kind else { return "EVALSHA" }
        return arguments.argument(at: 0).map { String(decoding: $0, as: UTF8.self).uppercased() } ?? ""
    }

    /// The key a cluster routes this command by: a script's first key, a plain command's first
    /// argument after its name; nil for a command without keys (`PING`, `MULTI`, `SCAN`...) or a
    /// script called with none.
    var routingKey: ArraySlice<UInt8>? {
        switch kind {
        case .script:
            guard let keyCount = arguments.argument(at: 0), keyCount.first != UInt8(ascii: "0") else { return nil }
            return arguments.argument(at: 1)
        case .plain:
            guard !Self.keyless.contains(name) else { return nil }
            return arguments.argument(at: 1)
        }
    }

    /// Commands (of those this project sends) whose first argument is not a key.
    private static let keyless: Set<String> = [
        "ACL", "ASKING", "AUTH", "CLIENT", "CLUSTER", "COMMAND", "CONFIG", "DBSIZE", "DEBUG", "DISCARD", "ECHO", "EXEC",
        "FLUSHALL", "FLUSHDB", "FUNCTION", "HELLO", "INFO", "KEYS", "MULTI", "PING", "READONLY", "RANDOMKEY", "ROLE",
        "SCAN", "SCRIPT", "SELECT", "TIME", "WAIT",
    ]

    private static let askingWire: [UInt8] = Array("*1\r\n$6\r\nASKING\r\n".utf8)

    /// Appends the command's wire form to `output`: as written for a plain command; a script as
    /// `EVALSHA <sha>` when the server's SHA is known, else as `EVAL <source>`.
    func write(into output: inout [UInt8]) {
        if isAsking { output.append(contentsOf: Self.askingWire) }
        switch kind {
        case .plain:
            arguments.write(into: &output)
        case .script(let script):
            if let sha = script.sha1 {
                arguments.write(into: &output, leading: ("EVALSHA", sha))
            } else {
                arguments.write(into: &output, leading: ("EVAL", script.source))
            }
        }
    }

    /// Appends the command as `EVAL <source>` (a script's NOSCRIPT fallback).
    func writeEval(into output: inout [UInt8]) {
        if isAsking { output.append(contentsOf: Self.askingWire) }
        guard case .script(let script) = kind else { return arguments.write(into: &output) }
        arguments.write(into: &output, leading: ("EVAL", script.source))
    }
}
