import Foundation
import KSMOperations
import Testing

/// Every declared `ksm serve` setting, with a value derived from its declaration, reaches the
/// configuration from each of the three sources (its flag on the command line, its environment
/// variable, its config-file key) and is shown by `--check-config` naming that source, redacted
/// when secret. A setting added to ``ServeSetting/all`` is covered without touching this test.
@Suite(.timeLimit(.minutes(2))) struct ServeSettingSourcesTests {
    enum Source: CaseIterable { case flag, environment, file }

    /// A value the setting accepts that is not its default, as flag arguments, environment text and JSON.
    struct Sample {
        var arguments: [String]
        var text: String
        var json: Any
        /// Text that must never appear in `--check-config` (a secret's), if any.
        var secret: String?
    }

    static func sample(_ setting: ServeSetting, secretFile: String) -> Sample {
        let flag = setting.flagName ?? ""
        switch setting.kind {
        case .string:
            let value = setting.example ?? "sample-\(setting.key)"
            return Sample(arguments: [flag, value], text: value, json: value, secret: setting.isSecret ? "password" : nil)
        case .choice(let words, let fallback):
            let value = words.last { $0 != fallback } ?? fallback
            return Sample(arguments: [flag, value], text: value, json: value)
        case .integer(let range, _):
            let value = range.lowerBound + (range.upperBound - range.lowerBound) / 4
            return Sample(arguments: [flag, String(value)], text: String(value), json: value)
        case .number(let bounds, _):
            let value = bounds.lower + (bounds.upper - bounds.lower) / 4
            return Sample(arguments: [flag, String(value)], text: String(value), json: value)
        case .duration(let bounds, _):
            let numbers = bounds.numbers
            if bounds.unit == .milliseconds {
                let value = Int(numbers.lower + (numbers.upper - numbers.lower) / 4)
                return Sample(arguments: [flag, String(value)], text: String(value), json: value)
            }
            let value = numbers.lower + (numbers.upper - numbers.lower) / 4
            return Sample(arguments: [flag, String(value)], text: String(value), json: value)
        case .boolean(let fallback):
            return Sample(arguments: [flag], text: String(!fallback), json: !fallback)
        case .integerList(let range):
            return Sample(arguments: [flag, String(range.lowerBound + 1)], text: String(range.lowerBound + 1), json: [range.lowerBound + 1])
        case .stringList:
            return Sample(arguments: [flag, "sample.topic"], text: "sample.topic", json: ["sample.topic"])
        case .map(let values):
            let secret = "hidden-\(UUID().uuidString)"
            let (name, value): (String, String) =
                switch values {
                case .strings: ("sample", setting.isSecret ? secret : secretFile)
                case .librdkafkaProperties: ("client.id", "sample")
                case .positiveNumbers: ("sample", "2")
                }
            let json: Any = values == .positiveNumbers ? [name: 2] : [name: value]
            return Sample(arguments: [flag, "\(name)=\(value)"], text: "\(name)=\(value)", json: json, secret: setting.isSecret ? secret : nil)
        }
    }

    @Test("every declared setting is reachable by flag, environment and config file, and shown by --check-config from there, redacted when secret")
    func everySettingFromEverySource() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ksm-sources-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let secretFile = directory.appendingPathComponent("secret").path
        try Data("sample-secret\n".utf8).write(to: URL(fileURLWithPath: secretFile))
        chmod(secretFile, 0o600)
        let configFile = directory.appendingPathComponent("ksm.json").path

        for setting in ServeSetting.all {
            let sample = Self.sample(setting, secretFile: secretFile)
            for source in Source.allCases {
                var environment = ServeConfigurationTests.required
                environment[setting.environment] = nil
                var arguments: [String] = []
                let expectedSource: String
                switch source {
                case .flag:
                    guard let flag = setting.flagName else { continue }
                    arguments = sample.arguments
                    expectedSource = flag
                case .environment:
                    environment[setting.environment] = sample.text
                    expectedSource = setting.environment
                case .file:
                    let data = try JSONSerialization.data(withJSONObject: [setting.key: sample.json])
                    try data.write(to: URL(fileURLWithPath: configFile))
                    arguments = ["--config", configFile]
                    expectedSource = "\"\(setting.key)\" in ksm.json"
                }
                let configuration: ServeConfiguration
                do {
                    configuration = try ServeConfiguration.resolve(arguments: arguments, environment: environment)
                } catch {
                    Issue.record("\(setting.key) from \(source) (\(arguments), \(setting.environment)): \(error)")
                    continue
                }
                let line = configuration.report.first { $0.key == setting.key }
                #expect(line?.source == expectedSource, "\(setting.key) from \(source): \(String(describing: line))")
                #expect(configuration.summary.contains("(\(expectedSource))"), "\(setting.key) from \(source)")
                if let secret = sample.secret {
                    #expect(!configuration.summary.contains(secret), "\(setting.key) from \(source) shows its secret")
                    #expect(line?.value.contains(Redaction.placeholder) == true, "\(setting.key) from \(source): \(String(describing: line))")
                }
            }
        }
    }

    @Test("every declaration states its help, and a default unless it is required, a list or a map; --help lists every flag with both")
    func everySettingHasHelpAndADefault() {
        let help = ServeSetting.helpText()
        for setting in ServeSetting.all {
            #expect(!setting.help.isEmpty, "\(setting.key)")
            switch setting.kind {
            case .integerList, .stringList, .map: break
            default:
                #expect(
                    setting.isRequired || setting.defaultText != nil || setting.key == "instance-id" || setting.key == "fpscrypto-library",
                    "\(setting.key) states no default")
            }
            let entry = setting.flagUsage ?? setting.key
            #expect(help.contains("  \(entry)\n"), "--help does not list \(entry)")
            #expect(help.contains(setting.environment), "--help does not name \(setting.environment)")
        }
    }

    @Test("the command line: --name=value, repeated lists, switches, unknown flags by name and values never quoted")
    func commandLine() throws {
        var environment = ServeConfigurationTests.required
        environment["KSM_REDIS_URL"] = nil
        let c = try ServeConfiguration.resolve(
            arguments: [
                "--redis-url=redis://r:6379/0", "--protocol-versions", "1", "2", "--kek", "a=/x", "--kek", "b=/y", "--no-scheduling", "--slot-count-interval",
                "0.5",
            ],
            environment: environment)
        #expect(c.protocolVersions == [1, 2] && c.keyEncryptionKeyFiles == ["a": "/x", "b": "/y"])
        #expect(!c.worker.scheduling.enabled && c.slotCountInterval == .milliseconds(500))
        let error = #expect(throws: ServeConfigurationError.self) {
            try ServeConfiguration.resolve(arguments: ["--redis-ur", "redis://u:hunter2@r/0", "stray-hunter3", "--admin-port", "x"], environment: environment)
        }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("--redis-ur") && text.contains("--redis-url") && text.contains("--admin-port"), "\(text)")
        #expect(!text.contains("hunter2") && !text.contains("hunter3"), "\(text)")
    }
}
