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

    /// A plain command such as `["SET", "k", "v"]`.
    public init(_ arguments: [RedisArgument]) {
        var encoder = RedisCommandEncoder(capacity: arguments.reduce(16) { $0 + $1.bytes.count + 16 })
        for argument in arguments { encoder.append(argument) }
        self.init(kind: .plain, arguments: encoder)
    }

    /// A plain command whose arguments, command name first, were written into `encoder`.
    public init(_ encoder: RedisCommandEncoder) {
        self.init(kind: .plain, arguments: encoder)
    }

    /// A script call; `keys` are the script's `KEYS`, `arguments` its `ARGV`.
    public static func evalScript(_ script: RedisScript, keys: [RedisArgument], arguments: [RedisArgument]) -> RedisCommand {
        var encoder = RedisCommandEncoder.script(keyCount: keys.count)
        for key in keys { encoder.append(key) }
        for argument in arguments { encoder.append(argument) }
        return RedisCommand(kind: .script(script), arguments: encoder)
    }

    /// A script call whose key count, keys and arguments were written into `encoder`, which
    /// ``RedisCommandEncoder/script(keyCount:capacity:)`` started.
    public static func evalScript(_ script: RedisScript, encoded encoder: RedisCommandEncoder) -> RedisCommand {
        RedisCommand(kind: .script(script), arguments: encoder)
    }

    private init(kind: Kind, arguments: RedisCommandEncoder) {
        self.kind = kind
        self.arguments = arguments
    }

    /// Appends the command's wire form to `output`: as written for a plain command; a script as
    /// `EVALSHA <sha>` when the server's SHA is known, else as `EVAL <source>`.
    func write(into output: inout [UInt8]) {
        switch kind {
        case .plain:
            arguments.write(into: &output)
        case .script(let script):
            if let sha = script.sha1 {
                arguments.write(into: &output, leading: ("EVALSHA", sha))
            } else {
                writeEval(into: &output)
            }
        }
    }

    /// Appends the command as `EVAL <source>` (a script's NOSCRIPT fallback).
    func writeEval(into output: inout [UInt8]) {
        guard case .script(let script) = kind else { return arguments.write(into: &output) }
        arguments.write(into: &output, leading: ("EVAL", script.source))
    }
}
