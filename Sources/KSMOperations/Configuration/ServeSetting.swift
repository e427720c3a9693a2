import KSMService

/// One setting of `ksm serve`, declared once: its config-file key, its flag, its environment
/// variable, the values it accepts with their unit and bounds, its default, whether it is secret,
/// and its help text.
///
/// The command line (``ServeCommandLine``), the environment and config-file readers
/// (``ServeConfigurationResolver``), `ksm serve --help` (``helpEntry``) and `--check-config` with its
/// redaction all follow ``all``: adding a setting is one declaration in a `ServeSetting+*.swift`
/// file and one line where the resolver puts its value into ``ServeConfiguration``.
package struct ServeSetting: Sendable {
    /// The config-file key, also the key read through swift-configuration and printed by `--check-config`.
    package let key: String
    /// How the command line sets it.
    package let flag: Flag
    /// The environment variable.
    package let environment: String
    /// What a value must look like, its bounds and unit, and its default.
    package let kind: Kind
    /// Values never printed whole (`--check-config` redacts them, problems never quote them).
    package let isSecret: Bool
    /// The setting must be given somewhere: start-up refuses a configuration without it.
    package let isRequired: Bool
    /// One or more sentences for `--help`, without the default or the environment variable.
    package let help: String
    /// The default in words where it is not one fixed value (derived at start-up, or "off"); nil:
    /// the kind's default value, or none.
    package let defaultDescription: String?
    /// A value that shows the expected shape, for `--help` and tests; nil: any text of the kind.
    package let example: String?

    init(
        _ key: String, flag: Flag? = nil, env: String, _ kind: Kind, secret: Bool = false, required: Bool = false,
        default description: String? = nil, example: String? = nil, help: String
    ) {
        self.key = key
        self.flag = flag ?? (kind.isBoolean ? .setsTrue(key) : .option(key))
        self.environment = env
        self.kind = kind
        self.isSecret = secret
        self.isRequired = required
        self.help = help
        self.defaultDescription = description
        self.example = example
    }

    /// How a setting appears on the command line.
    package enum Flag: Sendable, Equatable {
        /// No flag: only the config file and the environment set it.
        case none
        /// `--NAME VALUE` or `--NAME=VALUE`; repeatable for lists and maps.
        case option(String)
        /// A boolean switch that sets true: `--class-topics`.
        case setsTrue(String)
        /// A boolean switch that sets false: `--no-guards`.
        case setsFalse(String)

        /// The name without dashes; nil for ``none``.
        package var name: String? {
            switch self {
            case .none: nil
            case .option(let name), .setsTrue(let name), .setsFalse(let name): name
            }
        }
    }

    /// `--redis-url` style name of the flag; nil when only the file and the environment set it.
    package var flagName: String? { flag.name.map { "--\($0)" } }

    /// The default as `--help` and `--check-config` show it; nil when there is none.
    package var defaultText: String? { defaultDescription ?? kind.defaultText }

    /// Largest number of seconds most durations accept: a day.
    static let maximumSeconds = 86_400.0
}
