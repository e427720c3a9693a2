import KSMOperations
import Testing

/// `ksm speke`'s settings: flags over the environment over the defaults, the variables `ksm serve`
/// uses for the settings both have, and every problem named at once with no secret quoted.
@Suite struct SpekeConfigurationTests {
    @Test func flagsWinOverTheEnvironmentWhichWinsOverDefaults() throws {
        let environment = [
            "KSM_REDIS_URL": "redis://user:secret@redis:6379/0", "KSM_KEK_FILES": "a=/keys/a.hex, b=/keys/b.hex", "KSM_LOG_FORMAT": "json",
            "KSM_SPEKE_MAX_REQUEST_BYTES": "4096",
        ]
        let settings = try SpekeConfiguration.resolve(.init(listen: "[::]:9000", kek: ["b=/flag/b.hex"], logLevel: "debug"), environment: environment)
        #expect(settings.host == "::" && settings.port == 9000)
        #expect(settings.redisURL == "redis://user:secret@redis:6379/0")
        #expect(settings.keyEncryptionKeyFiles == ["a": "/keys/a.hex", "b": "/flag/b.hex"])
        #expect(settings.logLevel == .debug && settings.logFormat == .json)
        #expect(settings.maximumRequestBytes == 4096)
        #expect(!settings.summary.contains("secret"))
        #expect(settings.summary.contains("listen            = [::]:9000"))

        let defaults = try SpekeConfiguration.resolve(.init(redisURL: "redis://127.0.0.1:6379/0"), environment: [:])
        #expect(defaults.host == "0.0.0.0" && defaults.port == 8080)
        #expect(defaults.maximumRequestBytes == 1 << 20)
        #expect(defaults.logLevel == .info && defaults.logFormat == .text)
    }

    @Test func everyProblemIsNamedAndNoSecretQuoted() {
        do {
            _ = try SpekeConfiguration.resolve(
                .init(listen: "nowhere", redisURL: "http://user:hunter2@redis", kek: ["=x"], logLevel: "loud", logFormat: "xml", maxRequestBytes: 10),
                environment: [:])
            Issue.record("resolved a configuration with six problems")
        } catch {
            #expect(error.problems.count == 6, "\(error.problems)")
            #expect(!error.description.contains("hunter2"))
            for source in ["--listen", "--redis-url", "--kek", "--log-level", "--log-format", "--max-request-bytes"] {
                #expect(error.names(source), "\(source)")
            }
        }
        #expect(throws: ServeConfigurationError.self) { try SpekeConfiguration.resolve(.init(), environment: [:]) }
    }

    @Test func listenAddresses() {
        #expect(ListenAddress("127.0.0.1:8080") == ListenAddress("127.0.0.1:8080"))
        #expect(ListenAddress("localhost:1")?.host == "localhost")
        #expect(ListenAddress("[::1]:443")?.host == "::1")
        for bad in ["", ":80", "host", "host:0", "host:65536", "::1:80", "[]:80", "a b:80", "host:http"] {
            #expect(ListenAddress(bad) == nil, "\(bad)")
        }
    }
}
