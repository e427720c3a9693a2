import Foundation
import KSMTestSupport
import Testing

/// No secret value leaves `ksm serve`: `--check-config` and start-up errors, through the real
/// binary, with generated secrets that hold every URL-special character. Every output is searched
/// for the secret and for its percent-encoded and hex forms.
@Suite struct SecretRedactionTests {
    static func generatedPassword() -> String { GeneratedSecret.password() }

    static func percentEncoded(_ text: String) -> String { GeneratedSecret.percentEncoded(text) }

    static func base() throws -> [String: String] {
        ["KSM_KAFKA_BROKERS": "127.0.0.1:1", "KSM_CREDENTIALS": try KSMBinary.privateCredentials("Fixtures/test-credentials/certificates.json")]
    }

    /// Runs `ksm serve` with `arguments` and `environment`; returns everything it printed.
    static func output(_ arguments: [String], _ environment: [String: String]) async throws -> (status: Int32, text: String) {
        let result = try await KSMBinary.run(["serve"] + arguments, environment: environment, timeout: .seconds(60))
        return (result.status, String(decoding: result.stdout + result.stderr, as: UTF8.self))
    }

    /// The secret in the forms an output could carry it.
    static func forms(of secret: String) -> [String] {
        [secret, percentEncoded(secret), secret.lowercased(), secret.uppercased()]
    }

    @Test("Redis passwords with every URL-special character never appear in --check-config or a start-up error, single or cluster, with or without a user")
    func redisPasswordsNeverLeave() async throws {
        let password = Self.generatedPassword()
        let encoded = Self.percentEncoded(password)
        var cases: [(url: String, usable: Bool)] = []
        for userInfo in [":\(encoded)", "ksm:\(encoded)", encoded] {
            cases.append(("redis://\(userInfo)@127.0.0.1:1/0", true))
            cases.append(("redis-cluster://\(userInfo)@127.0.0.1:1,127.0.0.1:2", true))
        }
        // Written raw by mistake: refused, and still never shown.
        for userInfo in [":\(password)", "ksm:\(password)", password] {
            cases.append(("redis://\(userInfo)@127.0.0.1:1/0", false))
            cases.append(("redis-cluster://\(userInfo)@127.0.0.1:1,127.0.0.1:2", false))
        }
        let configFile = FileManager.default.temporaryDirectory.appendingPathComponent("ksm-secret-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).json")
        defer { try? FileManager.default.removeItem(at: configFile) }
        for (url, usable) in cases {
            var environment = try Self.base()
            environment["KSM_REDIS_URL"] = url
            let fromEnvironment = try await Self.output(["--check-config"], environment)
            let fromFlag = try await Self.output(["--check-config", "--redis-url", url], try Self.base())
            let json = String(decoding: try JSONSerialization.data(withJSONObject: ["redis-url": url]), as: UTF8.self)
            try json.write(to: configFile, atomically: true, encoding: .utf8)
            let fromFile = try await Self.output(["--check-config", "--config", configFile.path], try Self.base())
            // Start-up itself (no --check-config): a raw password stops it at once; an encoded one
            // gets as far as connecting, which fails on port 1 (bounded by the settings' timeouts).
            let startUp = usable ? nil : try await Self.output([], environment)
            for (name, run) in [("env", fromEnvironment), ("flag", fromFlag), ("file", fromFile)] + (startUp.map { [("start-up", $0)] } ?? []) {
                #expect(run.status == (usable && name != "start-up" ? 0 : 64), "\(name), \(usable ? "encoded" : "raw"): status \(run.status)")
                for form in Self.forms(of: password) + [encoded] {
                    #expect(!run.text.contains(form), "\(name), \(usable ? "encoded" : "raw") password shown: \(run.text.count) characters of output")
                }
                if !usable { #expect(run.text.contains("percent-encoded"), "\(name): \(run.text.suffix(400))") }
            }
        }
    }

    @Test("A malformed KSM_KEKS list never prints a key: a bare key, an empty ID, bad hex, a bad entry after a good one")
    func malformedKeyEncryptionKeyListsNeverPrintAKey() async throws {
        let key = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        let other = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        let lists = [
            key,  // no ID at all
            "=\(key)",  // an empty ID
            "demo=\(key.dropLast())",  // odd hex
            "good=\(other),\(key)",  // a bad entry after a good one
            "good=\(other),=\(key)",
            "bad id=\(key)",
        ]
        for list in lists {
            var environment = try Self.base()
            environment["KSM_REDIS_URL"] = "redis://127.0.0.1:1/0"
            environment["KSM_KEKS"] = list
            let check = try await Self.output(["--check-config"], environment)
            let startUp = try await Self.output([], environment)
            for (name, run) in [("--check-config", check), ("start-up", startUp)] {
                #expect(run.status == 64 || run.status == 1, "\(name): status \(run.status)")
                #expect(run.text.contains("KSM_KEKS entry"), "\(name): \(run.text.suffix(400))")
                for secret in [key, other, String(key.dropLast())] {
                    for form in Self.forms(of: secret) {
                        #expect(!run.text.contains(form), "\(name) printed a key for list shape \(lists.firstIndex(of: list) ?? -1)")
                    }
                    // Not even half of one.
                    #expect(!run.text.contains(String(secret.prefix(32))), "\(name) printed part of a key")
                }
            }
        }
    }
}
