import Foundation
import KSMLoad
import KSMTestSupport
import Testing

/// `ksm speke` serving HTTPS itself (`--tls-certificate`, `--tls-private-key`): the real binary with
/// a self-signed certificate openssl makes for `localhost` and 127.0.0.1, spoken to by curl, which
/// checks the chain against that certificate alone (`--cacert`). URLSession on Linux offers no way
/// to trust one self-signed certificate, and curl is what an operator would use against the port.
/// Then the start-up refusals: one setting without the other, and each file that cannot be used,
/// exit 64 naming the setting and never quoting a key.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct SpekeTLSTests {
    @Test("over TLS: /readyz and a packager's SPEKE request succeed (HTTP/2 and HTTP/1.1); an unknown CA, TLS 1.1 and plain HTTP to the port fail")
    func servesHTTPS() async throws {
        let tenant = try await SpekeServiceTests.ProvisionedTenant.start()
        defer { tenant.stop() }
        let certificate = try await SelfSignedCertificate.make()
        defer { certificate.remove() }
        let port = try RedisServerProcess.freeLoopbackPort()
        let speke = try RunningProcess(
            "speke-tls",
            [
                "speke", "--listen", "127.0.0.1:\(port)", "--redis-url", tenant.redis.url, "--kek", "demo-kek=\(tenant.kekPath)", "--log-format", "json",
                "--tls-certificate", certificate.certificatePath, "--tls-private-key", certificate.privateKeyPath,
            ])
        defer { speke.kill() }
        let ready = try await Curl.waitForReady("https://localhost:\(port)/readyz", caCertificate: certificate.certificatePath) { speke.isRunning }
        try #require(ready, "ksm speke never answered /readyz over TLS: \(speke.stderr.suffix(2_000))")

        let readiness = try await Curl.get("https://127.0.0.1:\(port)/readyz", caCertificate: certificate.certificatePath)
        #expect(readiness.status == 200 && readiness.text == "ok: redis up\n", "\(readiness)")
        // Both protocols ALPN offers: HTTP/2, and HTTP/1.1 for a client that asks for it alone.
        var answered: [[SpekeServiceTests.AnsweredKey]] = []
        for (option, version) in [("--http2", "2"), ("--http1.1", "1.1")] {
            let answer = try await Curl.post(
                "https://localhost:\(port)/speke/v2/demo/copyProtection", body: Array(SpekeServiceTests.fairPlayRequest.utf8),
                headers: ["Authorization": "Bearer \(tenant.token)", "X-Speke-Version": "2.0"], caCertificate: certificate.certificatePath,
                options: [option])
            #expect(answer.status == 200 && answer.httpVersion == version, "\(option): \(answer)")
            let keys = try SpekeServiceTests.fairPlayKeys(answer.body)
            #expect(keys.count == 2 && keys.allSatisfy { $0.key.count == 16 && $0.uri.hasPrefix("skd://test_case_1/0/") })
            answered.append(keys)
        }
        #expect(answered.count == 2 && answered[0] == answered[1], "the same keys over either protocol")
        let refused = try await Curl.post(
            "https://localhost:\(port)/speke/v2/demo/copyProtection", body: Array(SpekeServiceTests.fairPlayRequest.utf8),
            headers: ["X-Speke-Version": "2.0"], caCertificate: certificate.certificatePath)
        #expect(refused.status == 401)

        // The chain is really checked: without the CA, curl refuses the certificate (60).
        let untrusted = try await Curl.get("https://localhost:\(port)/healthz", caCertificate: nil)
        #expect(untrusted.status == nil && untrusted.curlExit == 60, "\(untrusted)")
        // Plain HTTP to the TLS port gets no HTTP answer: the server reads a ClientHello or nothing.
        let plain = try await Curl.get("http://127.0.0.1:\(port)/healthz", caCertificate: nil)
        #expect(plain.status == nil && plain.curlExit != 0, "\(plain)")
        // TLS 1.1 offered (openssl at security level 0, so the client would take it): refused.
        let old = try await ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["openssl", "s_client", "-connect", "127.0.0.1:\(port)", "-tls1_1", "-cipher", "DEFAULT:@SECLEVEL=0"],
            input: [], mergeOutput: true, timeout: .seconds(30))
        #expect(old.stdoutText.contains("alert protocol version"), "\(old.stdoutText.suffix(1_000))")
        let stillServing = try await Curl.get("https://localhost:\(port)/healthz", caCertificate: certificate.certificatePath)
        #expect(stillServing.status == 200)

        #expect(speke.stderr.contains("\"scheme\":\"https\""), "\(speke.stderr.suffix(2_000))")
        #expect(!speke.stderr.contains(tenant.token))
        #expect(await speke.terminate() == 0)
    }

    /// A start with one of the two settings given (by flag or by environment variable).
    enum HalfConfiguration: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case certificateFlag = "--tls-certificate alone"
        case privateKeyFlag = "--tls-private-key alone"
        case certificateVariable = "KSM_SPEKE_TLS_CERTIFICATE alone"
        case privateKeyVariable = "KSM_SPEKE_TLS_PRIVATE_KEY alone"
        var testDescription: String { rawValue }
    }

    @Test("one TLS setting without the other exits 64, naming both", arguments: HalfConfiguration.allCases)
    func oneWithoutTheOther(_ half: HalfConfiguration) async throws {
        let certificate = try await SelfSignedCertificate.make()
        defer { certificate.remove() }
        var arguments = ["speke", "--listen", "127.0.0.1:1", "--redis-url", "redis://127.0.0.1:1/0"]
        var environment: [String: String] = [:]
        let (given, missing): (String, String)
        switch half {
        case .certificateFlag:
            arguments += ["--tls-certificate", certificate.certificatePath]
            (given, missing) = ("--tls-certificate", "--tls-private-key")
        case .privateKeyFlag:
            arguments += ["--tls-private-key", certificate.privateKeyPath]
            (given, missing) = ("--tls-private-key", "--tls-certificate")
        case .certificateVariable:
            environment["KSM_SPEKE_TLS_CERTIFICATE"] = certificate.certificatePath
            (given, missing) = ("KSM_SPEKE_TLS_CERTIFICATE", "KSM_SPEKE_TLS_PRIVATE_KEY")
        case .privateKeyVariable:
            environment["KSM_SPEKE_TLS_PRIVATE_KEY"] = certificate.privateKeyPath
            (given, missing) = ("KSM_SPEKE_TLS_PRIVATE_KEY", "KSM_SPEKE_TLS_CERTIFICATE")
        }
        for checkConfig in [false, true] {
            let result = try await KSMBinary.run(arguments + (checkConfig ? ["--check-config"] : []), environment: environment, timeout: .seconds(30))
            let stderr = String(decoding: result.stderr, as: UTF8.self)
            #expect(result.status == 64, "\(half) (check-config \(checkConfig)): \(stderr)")
            #expect(stderr.contains(given) && stderr.contains(missing), "\(stderr)")
            #expect(!stderr.contains("USAGE"))
        }
    }

    /// A file that cannot be served with, and the setting its message must name.
    enum UnusableFile: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case missingCertificate = "certificate path that does not exist"
        case keyAsCertificate = "a private key given as the certificate"
        case missingKey = "private key path that does not exist"
        case keyReadableByOthers = "private key at mode 0644"
        case certificateAsKey = "a certificate given as the private key"
        case keyOfAnotherCertificate = "the private key of another certificate"
        var testDescription: String { rawValue }
    }

    @Test("a TLS file that cannot be used exits 64 at start-up, naming the setting and the path, quoting no key", arguments: UnusableFile.allCases)
    func unusableFile(_ unusable: UnusableFile) async throws {
        let certificate = try await SelfSignedCertificate.make()
        defer { certificate.remove() }
        var (certificatePath, privateKeyPath) = (certificate.certificatePath, certificate.privateKeyPath)
        let setting: String
        switch unusable {
        case .missingCertificate:
            certificatePath = certificate.directory.appendingPathComponent("absent.pem").path
            setting = "--tls-certificate"
        case .keyAsCertificate:
            certificatePath = certificate.privateKeyPath
            setting = "--tls-certificate"
        case .missingKey:
            privateKeyPath = certificate.directory.appendingPathComponent("absent.key").path
            setting = "--tls-private-key"
        case .keyReadableByOthers:
            #expect(chmod(privateKeyPath, 0o644) == 0)
            setting = "--tls-private-key"
        case .certificateAsKey:
            let copy = certificate.directory.appendingPathComponent("certificate-copy.pem").path
            try FileManager.default.copyItem(atPath: certificate.certificatePath, toPath: copy)
            #expect(chmod(copy, 0o600) == 0)
            privateKeyPath = copy
            setting = "--tls-private-key"
        case .keyOfAnotherCertificate:
            let other = try await SelfSignedCertificate.make()
            defer { other.remove() }
            let copy = certificate.directory.appendingPathComponent("other.key").path
            try FileManager.default.copyItem(atPath: other.privateKeyPath, toPath: copy)
            privateKeyPath = copy
            setting = "--tls-private-key"
        }
        let keyText = try String(contentsOfFile: certificate.privateKeyPath, encoding: .utf8)
        let keyBody = keyText.split(separator: "\n").filter { !$0.hasPrefix("-----") }
        for checkConfig in [false, true] {
            let result = try await KSMBinary.run(
                [
                    "speke", "--listen", "127.0.0.1:1", "--redis-url", "redis://127.0.0.1:1/0", "--tls-certificate", certificatePath, "--tls-private-key",
                    privateKeyPath,
                ] + (checkConfig ? ["--check-config"] : []),
                environment: [:], timeout: .seconds(30))
            let stderr = String(decoding: result.stderr, as: UTF8.self)
            let path = setting == "--tls-certificate" ? certificatePath : privateKeyPath
            #expect(result.status == 64, "\(unusable) (check-config \(checkConfig)): \(stderr)")
            #expect(stderr.contains(setting) && stderr.contains(path), "\(stderr)")
            #expect(!stderr.contains("PRIVATE KEY-----") && !keyBody.contains { stderr.contains($0) }, "key material in: \(stderr)")
            #expect(result.stdout.isEmpty, "nothing is printed as usable")
        }
    }

    @Test("--check-config prints the TLS files' paths and where they were set, not their contents")
    func checkConfigShowsPaths() async throws {
        let certificate = try await SelfSignedCertificate.make()
        defer { certificate.remove() }
        let result = try await KSMBinary.run(
            ["speke", "--check-config", "--redis-url", "redis://127.0.0.1:1/0", "--tls-certificate", certificate.certificatePath],
            environment: ["KSM_SPEKE_TLS_PRIVATE_KEY": certificate.privateKeyPath], timeout: .seconds(30))
        let printed = String(decoding: result.stdout, as: UTF8.self)
        #expect(result.status == 0, "\(String(decoding: result.stderr, as: UTF8.self))")
        #expect(printed.contains("tls-certificate   = \(certificate.certificatePath) (--tls-certificate)"), "\(printed)")
        #expect(printed.contains("tls-private-key   = \(certificate.privateKeyPath) (KSM_SPEKE_TLS_PRIVATE_KEY)"), "\(printed)")
        #expect(!printed.contains("BEGIN"))
        let plain = try await KSMBinary.run(["speke", "--check-config", "--redis-url", "redis://127.0.0.1:1/0"], environment: [:], timeout: .seconds(30))
        #expect(String(decoding: plain.stdout, as: UTF8.self).contains("tls               = off (plain HTTP)"))
    }
}

/// A self-signed certificate (P-256, a day long, for `localhost` and 127.0.0.1) and its key, made by
/// openssl in a directory of its own; the key at mode 0600, as `ksm` wants a secret file.
struct SelfSignedCertificate {
    let directory: URL
    var certificatePath: String { directory.appendingPathComponent("tls.crt").path }
    var privateKeyPath: String { directory.appendingPathComponent("tls.key").path }

    static func make() async throws -> SelfSignedCertificate {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ksm-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let made = SelfSignedCertificate(directory: directory)
        let result = try await ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1", "-subj", "/CN=localhost",
                "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", made.privateKeyPath, "-out", made.certificatePath,
            ],
            timeout: .seconds(60))
        guard result.succeeded, chmod(made.privateKeyPath, 0o600) == 0 else {
            made.remove()
            throw ProcessFailure(description: "openssl could not make a certificate: \(result.stderrText)")
        }
        return made
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}

/// HTTP(S) through curl: the status and body, or curl's own exit status when no HTTP answer came
/// (60: the certificate did not verify; 52, 56: the connection gave no answer).
enum Curl {
    struct Exchange: CustomStringConvertible {
        var curlExit: Int32
        var status: Int?
        /// `1.1` or `2`, as curl reports the protocol it spoke.
        var httpVersion: String
        var body: [UInt8]
        var error: String
        var text: String { String(decoding: body, as: UTF8.self) }
        var description: String {
            "curl exit \(curlExit), HTTP/\(httpVersion) status \(status.map(String.init) ?? "none"): \(text.prefix(300)) \(error)"
        }
    }

    static func get(_ url: String, caCertificate: String?, options: [String] = []) async throws -> Exchange {
        try await run(url, options: options, caCertificate: caCertificate)
    }

    static func post(_ url: String, body: [UInt8], headers: [String: String], caCertificate: String?, options: [String] = []) async throws -> Exchange {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ksm-curl-body-\(UUID().uuidString)")
        try Data(body).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var options = options + ["-X", "POST", "-H", "Content-Type: application/xml", "--data-binary", "@\(file.path)"]
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { options += ["-H", "\(name): \(value)"] }
        return try await run(url, options: options, caCertificate: caCertificate)
    }

    static func run(_ url: String, options: [String], caCertificate: String?) async throws -> Exchange {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("ksm-curl-out-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        // -g: the URL is taken literally ([::1] would otherwise be a glob range).
        var arguments = ["curl", "-sS", "-g", "--max-time", "10", "-o", output.path, "-w", "%{http_code} %{http_version}"]
        if let caCertificate { arguments += ["--cacert", caCertificate] }
        let result = try await ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), arguments + options + [url], timeout: .seconds(30))
        let written = result.stdoutText.split(separator: " ").map(String.init)
        let code = written.first.flatMap { Int($0) } ?? 0
        let body = (try? Data(contentsOf: output)).map { Array($0) } ?? []
        return Exchange(
            curlExit: result.status, status: result.succeeded && code > 0 ? code : nil, httpVersion: written.dropFirst().first ?? "", body: body,
            error: result.stderrText)
    }

    /// Polls `url` until it answers 200 (true), `alive` turns false or `timeout` passes.
    static func waitForReady(_ url: String, caCertificate: String?, timeout: Duration = .seconds(60), alive: () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while alive(), ContinuousClock.now < deadline {
            if try await get(url, caCertificate: caCertificate).status == 200 { return true }
            try await Task.sleep(for: .milliseconds(250))
        }
        return false
    }
}
