import KSMService

/// One mistake in `ksm serve`'s configuration: what is wrong, where it was written, and what to do.
///
/// ``message`` is a sentence for a person: it names the flag, environment variable or config-file
/// key exactly as written, so the operator can find it, and says what would be accepted.
package struct ConfigurationProblem: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Kind: String, Sendable, Equatable {
        /// A config-file key `ksm serve` does not know (a typo such as `redsi-url`).
        case unknownKey
        /// A value of the wrong JSON type, or text that is not the number or boolean expected.
        case wrongType
        /// A number outside the range the setting accepts.
        case outOfRange
        /// A required setting given nowhere.
        case missing
        /// A value of the right type that still cannot be used (an unknown log level, a malformed pair).
        case invalidValue
        /// The config file or a file it names cannot be read or is not acceptable.
        case unreadableFile
    }

    package var kind: Kind
    /// Where the value was written: `--admin-port`, `KSM_ADMIN_PORT`, or `"admin-port" in ksm.json`.
    package var source: String
    package var message: String

    package init(_ kind: Kind, source: String, message: String) {
        self.kind = kind
        self.source = source
        self.message = message
    }

    package var description: String { message }
}

/// Every problem found while resolving `ksm serve`'s configuration; resolution goes on past the first
/// so one run names them all.
package struct ServeConfigurationError: Error, Sendable, CustomStringConvertible {
    /// The process exit status for a configuration mistake: sysexits' `EX_USAGE` (64), the status
    /// swift-argument-parser gives a malformed command line, so scripts see one code for both.
    package static let exitCode: Int32 = 64

    package var problems: [ConfigurationProblem]

    package init(problems: [ConfigurationProblem]) { self.problems = problems }

    package var description: String {
        problems.map(\.message).joined(separator: "\n")
    }

    /// True if some problem concerns `source` (a flag, variable or key name, as written).
    package func names(_ source: String) -> Bool {
        problems.contains { $0.source.contains(source) }
    }
}
