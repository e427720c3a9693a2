import KSMService

/// `ksm serve`'s command line, read against ``ServeSetting/all``: every setting's flag is known
/// from its declaration, so no flag is declared twice.
///
/// `--NAME VALUE` and `--NAME=VALUE` set a setting (the last one wins; lists and maps gather every
/// one), a switch (`--tracing`, `--no-guards`) sets its boolean, and `--protocol-versions` takes
/// every value up to the next flag. Problems name the flag, never a value: a value may be a secret.
package struct ServeCommandLine: Sendable {
    /// The flags given, by config-file key; `config` for `--config`.
    package private(set) var flags: [String: ConfigFlagValue] = [:]
    package private(set) var problems: [ConfigurationProblem] = []

    /// Settings by flag name, `--config` included.
    static let byFlag: [String: ServeSetting] = Dictionary(
        uniqueKeysWithValues: ([ServeSetting.config] + ServeSetting.all).compactMap { setting in setting.flag.name.map { ($0, setting) } })

    package init(_ arguments: [String]) {
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--"), argument.count > 2 else {
                problems.append(
                    .init(
                        .invalidValue, source: "argument \(index)",
                        message: "Argument \(index) of ksm serve belongs to no flag (not shown: it may hold a secret): every setting is a --flag VALUE pair."))
                continue
            }
            let body = argument.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            let attached = body.firstIndex(of: "=").map { String(body[body.index(after: $0)...]) }
            guard let setting = Self.byFlag[name] else {
                unknown(name)
                // Its value, if it has one, goes with it rather than being reported again.
                if attached == nil, index < arguments.endIndex, !arguments[index].hasPrefix("-") { index += 1 }
                continue
            }
            switch setting.flag {
            case .setsTrue, .setsFalse:
                guard attached == nil else {
                    problems.append(
                        .init(.invalidValue, source: "--\(name)", message: "--\(name) is a switch and takes no value: write --\(name) alone, or remove it."))
                    continue
                }
                flags[setting.key] = .boolean(setting.flag == .setsTrue(name))
            case .option, .none:
                var values: [String] = attached.map { [$0] } ?? []
                if attached == nil {
                    if case .integerList = setting.kind {
                        while index < arguments.endIndex, !arguments[index].hasPrefix("--") {
                            values.append(arguments[index])
                            index += 1
                        }
                    } else if index < arguments.endIndex {
                        values.append(arguments[index])
                        index += 1
                    }
                }
                guard !values.isEmpty else {
                    problems.append(.init(.missing, source: "--\(name)", message: "--\(name) needs a value: --\(name) \(setting.kind.placeholder)."))
                    continue
                }
                add(values, to: setting)
            }
        }
    }

    private mutating func add(_ values: [String], to setting: ServeSetting) {
        switch setting.kind {
        case .integerList, .stringList, .map:
            var list: [String] = []
            if case .list(let earlier) = flags[setting.key] { list = earlier }
            flags[setting.key] = .list(list + values)
        default:
            flags[setting.key] = values.last.map { .string($0) }
        }
    }

    private mutating func unknown(_ name: String) {
        let suggestion = ServeConfigFile.closest(to: name, among: Array(Self.byFlag.keys)).map { " Did you mean --\($0)?" } ?? ""
        problems.append(
            .init(.unknownKey, source: "--\(name)", message: "Unknown flag --\(name) for ksm serve.\(suggestion) See ksm serve --help."))
    }
}
