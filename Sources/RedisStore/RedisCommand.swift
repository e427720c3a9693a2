/// One command in a pipeline: plain arguments, or a script call (`EVALSHA` with `NOSCRIPT` fallback).
public struct RedisCommand: Sendable {
    enum Kind: Sendable {
        case plain([RedisArgument])
        case script(RedisScript, keys: [RedisArgument], arguments: [RedisArgument])
    }

    let kind: Kind

    /// A plain command such as `["SET", "k", "v"]`.
    public init(_ arguments: [RedisArgument]) {
        kind = .plain(arguments)
    }

    /// A script call; `keys` are the script's `KEYS`, `arguments` its `ARGV`.
    public static func evalScript(_ script: RedisScript, keys: [RedisArgument], arguments: [RedisArgument]) -> RedisCommand {
        RedisCommand(kind: .script(script, keys: keys, arguments: arguments))
    }

    private init(kind: Kind) { self.kind = kind }

    /// `EVALSHA sha n keys... args...`.
    func evalSHAArguments(sha: String) -> [RedisArgument]? {
        guard case .script(_, let keys, let arguments) = kind else { return nil }
        return [RedisArgument("EVALSHA"), RedisArgument(sha), RedisArgument(keys.count)] + keys + arguments
    }

    /// `EVAL source n keys... args...`.
    func evalArguments() -> [RedisArgument]? {
        guard case .script(let script, let keys, let arguments) = kind else { return nil }
        return [RedisArgument("EVAL"), RedisArgument(script.source), RedisArgument(keys.count)] + keys + arguments
    }
}
