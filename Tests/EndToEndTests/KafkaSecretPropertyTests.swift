import Foundation
import KSMTestSupport
import Testing

/// A librdkafka secret (a SASL password) given every way `ksm serve` accepts one never appears in
/// anything the real binary prints: `--check-config`'s report, its refusals, or a start-up that
/// fails after the properties reached librdkafka.
@Suite struct KafkaSecretPropertyTests {
    /// A fresh secret: two random tokens around every character that means something in a URL, a
    /// shell or a `KEY=VALUE;KEY=VALUE` list. A token found in any output means some part leaked.
    struct Secret {
        let head = Self.token()
        let tail = Self.token()
        static let specials = "/?#%:@+&=; \"'"

        static func token() -> String {
            String((0..<16).map { _ in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".randomElement() ?? "x" })
        }

        var value: String { head + Self.specials + tail }
        /// KSM_KAFKA_PROPERTIES separates pairs with `;`, so a value holding one cannot be written
        /// there (docs/deployment.md: such a secret belongs in a file anyway).
        var valueWithoutSemicolon: String { head + Self.specials.replacingOccurrences(of: ";", with: "") + tail }

        /// Every form a leak could take: the tokens (any cut of the value), and the value whole,
        /// percent-encoded and JSON-escaped.
        func leaks(in output: String) -> [String] {
            let encoded = value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value
            let escaped = value.replacingOccurrences(of: "\"", with: "\\\"")
            return [head, tail, value, encoded, escaped].filter { output.contains($0) }
        }
    }

    /// One way to give the secret: extra arguments, environment and config-file members.
    struct Form: CustomTestStringConvertible, Sendable {
        var name: String
        var inline: Bool
        var testDescription: String { name }
    }

    static let forms = [
        Form(name: "--kafka-property", inline: true), Form(name: "KSM_KAFKA_PROPERTIES", inline: true),
        Form(name: "kafka-properties in the config file", inline: true), Form(name: "--kafka-property-file", inline: false),
        Form(name: "KSM_KAFKA_PROPERTY_FILES", inline: false), Form(name: "kafka-property-files in the config file", inline: false),
    ]

    /// A directory of the test's own, mode 700, removed at the end.
    static func directory() throws -> URL {
        let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("ksm-kafka-secret-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return url
    }

    static func write(_ text: String, to url: URL, mode: Int) throws {
        try Data(text.utf8).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: url.path)
    }

    /// The arguments and environment that give `secret` as `form`, beside SASL's other settings.
    static func configure(_ form: Form, secret: Secret, in directory: URL) throws -> (arguments: [String], environment: [String: String]) {
        var environment = [
            "KSM_KAFKA_BROKERS": "127.0.0.1:1", "KSM_REDIS_URL": "redis://127.0.0.1:1/0",
            "KSM_CREDENTIALS": try KSMBinary.privateCredentials("Fixtures/test-credentials/certificates.json"),
        ]
        var arguments = [
            "--kafka-property", "security.protocol=SASL_PLAINTEXT", "--kafka-property", "sasl.mechanism=PLAIN",
            "--kafka-property", "sasl.username=ksm",
        ]
        let file = directory.appendingPathComponent("sasl.password")
        // A Secret's file, as `kubectl create secret --from-file` stores it: with a trailing line break.
        try write(secret.value + "\n", to: file, mode: 0o600)
        let config = directory.appendingPathComponent("ksm.json")
        switch form.name {
        case "--kafka-property": arguments += ["--kafka-property", "sasl.password=\(secret.value)"]
        case "KSM_KAFKA_PROPERTIES": environment["KSM_KAFKA_PROPERTIES"] = "sasl.password=\(secret.valueWithoutSemicolon);client.id=ksm"
        case "--kafka-property-file": arguments += ["--kafka-property-file", "sasl.password=\(file.path)"]
        case "KSM_KAFKA_PROPERTY_FILES": environment["KSM_KAFKA_PROPERTY_FILES"] = "sasl.password=\(file.path)"
        default:
            let member = form.inline ? ["kafka-properties": ["sasl.password": secret.value]] : ["kafka-property-files": ["sasl.password": file.path]]
            try Data(try JSONSerialization.data(withJSONObject: member)).write(to: config)
            environment["KSM_CONFIG"] = config.path
        }
        return (arguments, environment)
    }

    static func output(_ result: KSMBinary.Result) -> String {
        String(decoding: result.stdout, as: UTF8.self) + "\n" + String(decoding: result.stderr, as: UTF8.self)
    }

    @Test("A SASL password is in no output of ksm serve --check-config, whichever way it is given", arguments: forms)
    func checkConfigNeverPrintsTheSecret(form: Form) async throws {
        let secret = Secret()
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (arguments, environment) = try Self.configure(form, secret: secret, in: directory)
        let result = try await KSMBinary.run(["serve", "--check-config"] + arguments, environment: environment)
        let output = Self.output(result)
        #expect(result.status == 0, "\(output)")
        #expect(output.contains("SASL_PLAINTEXT"), "the report lists the other properties: \(output)")
        #expect(secret.leaks(in: output).isEmpty, "\(form.name): the secret shows in \(output)")
    }

    @Test("A SASL password is in no output of a ksm serve whose start-up fails in librdkafka, whichever way it is given", arguments: forms)
    func failedStartUpNeverPrintsTheSecret(form: Form) async throws {
        let secret = Secret()
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (arguments, environment) = try Self.configure(form, secret: secret, in: directory)
        // librdkafka refuses this one property while taking the others, secret included.
        let result = try await KSMBinary.run(
            ["serve"] + arguments + ["--kafka-property", "fetch.wait.max.ms=notanumber"],
            environment: environment, timeout: .seconds(60))
        let output = Self.output(result)
        #expect(result.status == 1, "\(output)")
        #expect(output.contains("fetch.wait.max.ms"), "the failure names the property librdkafka refused: \(output)")
        #expect(secret.leaks(in: output).isEmpty, "\(form.name): the secret shows in \(output)")
    }

    @Test(
        "ksm admin create-topics (the topics Job) prints no SASL password when the cluster cannot be reached, whichever way it is given",
        arguments: forms.filter { !$0.name.contains("config file") })
    func createTopicsNeverPrintsTheSecret(form: Form) async throws {
        let secret = Secret()
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (arguments, environment) = try Self.configure(form, secret: secret, in: directory)
        let result = try await KSMBinary.run(["admin", "create-topics", "--timeout", "2"] + arguments, environment: environment, timeout: .seconds(60))
        let output = Self.output(result)
        #expect(result.status == 1, "\(output)")
        #expect(output.contains("Cannot read the cluster's topics"), "\(output)")
        #expect(secret.leaks(in: output).isEmpty, "\(form.name): the secret shows in \(output)")
    }

    @Test("A property file others may read is refused with status 64, naming the path and never the content")
    func exposedPropertyFileIsRefused() async throws {
        let secret = Secret()
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var (arguments, environment) = try Self.configure(Form(name: "KSM_KAFKA_PROPERTY_FILES", inline: false), secret: secret, in: directory)
        let file = directory.appendingPathComponent("sasl.password")
        try Self.write(secret.value, to: file, mode: 0o644)
        for command in [["serve", "--check-config"], ["serve"]] {
            let result = try await KSMBinary.run(command + arguments, environment: environment, timeout: .seconds(60))
            let output = Self.output(result)
            #expect(result.status == 64, "\(output)")
            #expect(output.contains(file.path) && output.contains("sasl.password"), "\(output)")
            #expect(secret.leaks(in: output).isEmpty, "the secret shows in \(output)")
        }
        // Given both as a value and as a file: refused, neither shown.
        try Self.write(secret.value, to: file, mode: 0o600)
        arguments += ["--kafka-property", "sasl.password=\(secret.value)"]
        environment["KSM_KAFKA_PROPERTY_FILES"] = "sasl.password=\(file.path)"
        let both = try await KSMBinary.run(["serve", "--check-config"] + arguments, environment: environment)
        #expect(both.status == 64, "\(Self.output(both))")
        #expect(secret.leaks(in: Self.output(both)).isEmpty, "the secret shows in \(Self.output(both))")
    }
}
