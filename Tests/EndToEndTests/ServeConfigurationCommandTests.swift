import Foundation
import KSMOperations
import KSMService
import KSMTestSupport
import OwnedThreads
import Testing
import Yams

/// `ksm serve --check-config` and the start-up refusals, through the real binary.
@Suite struct ServeConfigurationCommandTests {
    static func run(_ arguments: [String], environment: [String: String]) async throws -> KSMBinary.Result {
        try await KSMBinary.run(arguments, environment: environment)
    }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    static func baseEnvironment() throws -> [String: String] {
        [
            "KSM_KAFKA_BROKERS": "127.0.0.1:1", "KSM_REDIS_URL": "redis://ksm:hunter2@127.0.0.1:1/0",
            "KSM_CREDENTIALS": try KSMBinary.privateCredentials("Fixtures/test-credentials/certificates.json"),
        ]
    }

    @Test("ksm serve --help names every flag's environment variable, from the setting table the resolver reads")
    func helpNamesEveryEnvironmentVariable() async throws {
        let help = try await KSMBinary.run(["serve", "--help"])
        #expect(help.status == 0)
        // Help wraps lines at spaces; the variables hold none.
        let text = Self.text(help.stdout)
        for setting in ServeSetting.all where setting.flagName != nil {
            let variable = setting.environment
            #expect(text.contains(variable), "\(setting.flagName ?? setting.key) does not name \(variable)")
        }
        #expect(text.contains(ServeSetting.configFileEnvironment))
    }

    @Test("ksm --version prints the version")
    func version() async throws {
        let result = try await KSMBinary.run(["--version"])
        #expect(result.status == 0)
        #expect(Self.text(result.stdout).trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".").count == 3)
    }

    @Test("--check-config prints the settings with secrets redacted and exits 0, connecting to nothing")
    func checkConfigRedacts() async throws {
        var env = try Self.baseEnvironment()
        env["KSM_KAFKA_PROPERTIES"] = "sasl.password=hunter3;security.protocol=SASL_SSL"
        let result = try await Self.run(["serve", "--check-config"], environment: env)
        let out = Self.text(result.stdout)
        #expect(result.status == 0, "\(Self.text(result.stderr))")
        #expect(out.contains("redis-url") && out.contains("SASL_SSL"))
        #expect(!out.contains("hunter2") && !out.contains("hunter3"))
    }

    @Test("crypto threads and concurrent batches default to the CPU quota of the worker's cgroup, as a container limit sets it")
    func defaultsFollowTheCPUQuota() async throws {
        // The worker runs under a 1-CPU CFS quota in a cgroup of its own, bound over the cgroup root
        // in a private mount namespace (what a container sees). Needs root, unshare and a writable
        // cgroup hierarchy (v1 or v2); the script exits 77 where the host offers none of that.
        let unshare = ["/usr/bin/unshare", "/bin/unshare"].first { FileManager.default.isExecutableFile(atPath: $0) }
        // A real skip, reported by the runner as one: the host cannot make the cgroup.
        guard geteuid() == 0, let unshare else { try Test.cancel("needs root and unshare") }
        let script = #"""
            name=ksm-quota-$$
            if [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
              dir=/sys/fs/cgroup/cpu/$name
              mkdir "$dir" && echo 100000 > "$dir/cpu.cfs_period_us" && echo 100000 > "$dir/cpu.cfs_quota_us" || exit 77
              echo $$ > "$dir/cgroup.procs" && mount --bind "$dir" /sys/fs/cgroup/cpu || { rmdir "$dir"; exit 77; }
            elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then
              dir=/sys/fs/cgroup/$name
              mkdir "$dir" || exit 77
              echo +cpu > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
              echo "100000 100000" > "$dir/cpu.max" && echo $$ > "$dir/cgroup.procs" && mount --bind "$dir" /sys/fs/cgroup || { rmdir "$dir"; exit 77; }
            else
              exit 77
            fi
            echo "$dir" >&2
            "$KSM" serve --check-config
            """#
        let result = try await ProcessRunner.run(
            URL(fileURLWithPath: unshare), ["-m", "/bin/sh", "-c", script],
            environment: try Self.baseEnvironment().merging(["KSM": KSMBinary.url.path, "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"]) { a, _ in a },
            timeout: .seconds(120))
        let stdout = Self.text(result.stdout)
        let stderr = Self.text(result.stderr)
        // The cgroup is empty once the worker exited; the bind mount went with the namespace.
        if let made = stderr.split(separator: "\n").first(where: { $0.hasPrefix("/sys/fs/cgroup/") }) { rmdir(String(made)) }
        if result.status == 77 { try Test.cancel("no writable cgroup hierarchy here") }
        #expect(result.succeeded, "\(stderr)")
        let settings = stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }
        #expect(settings.contains("crypto-threads = 1 (default)"), "\(stdout)")
        #expect(settings.contains("concurrent-batches = 4 (default)"), "\(stdout)")
    }

    @Test("crypto threads and concurrent batches default to the CPUs the affinity mask allows, as taskset sets it")
    func defaultsFollowTheAffinityMask() async throws {
        let allowed = try #require(CPUAffinity.allowedCPUs())
        let result = try await ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/taskset"), ["-c", "\(allowed[0])", KSMBinary.url.path, "serve", "--check-config"],
            environment: try Self.baseEnvironment().merging(["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"]) { a, _ in a }, timeout: .seconds(60))
        let stdout = Self.text(result.stdout)
        #expect(result.succeeded, "\(Self.text(result.stderr))")
        let settings = stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }
        #expect(settings.contains("crypto-threads = 1 (default)"), "\(stdout)")
        #expect(settings.contains("concurrent-batches = 4 (default)"), "\(stdout)")
    }

    @Test("--check-config names every problem and exits 64")
    func checkConfigProblems() async throws {
        var env = try Self.baseEnvironment()
        env["KSM_ADMIN_PORT"] = "notanumber"
        env["KSM_CACHE_TTL"] = "inf"
        let result = try await Self.run(["serve", "--check-config", "--trace-sample-ratio", "5"], environment: env)
        let err = Self.text(result.stderr)
        #expect(result.status == 64)
        #expect(err.contains("KSM_ADMIN_PORT") && err.contains("KSM_CACHE_TTL") && err.contains("--trace-sample-ratio"))
        #expect(!err.contains("USAGE"))
    }

    @Test("--admin-port 99999 is refused with exit status 64, without usage text or a crash")
    func adminPortOutOfRange() async throws {
        let result = try await Self.run(["serve", "--admin-port", "99999"], environment: try Self.baseEnvironment())
        #expect(result.status == 64)
        #expect(Self.text(result.stderr).contains("--admin-port") && !Self.text(result.stderr).contains("USAGE"))
    }

    @Test("KSM_ADMIN_PORT=notanumber is refused with exit status 64")
    func adminPortNotANumber() async throws {
        var env = try Self.baseEnvironment()
        env["KSM_ADMIN_PORT"] = "notanumber"
        let result = try await Self.run(["serve"], environment: env)
        #expect(result.status == 64)
        #expect(Self.text(result.stderr).contains("KSM_ADMIN_PORT"))
    }

    /// The `ksm serve` command lines and environment blocks of deploy/, with their file paths
    /// replaced by placeholder files laid out here (mode 0600 copies of the fixtures).
    @Test("every ksm serve in deploy/docker-compose.yml and the Kubernetes Deployment resolves with --check-config")
    func deployManifestsResolve() async throws {
        let root = KSMBinary.packageRoot.appendingPathComponent("deploy")
        let kek = NSTemporaryDirectory() + "ksm-deploy-kek-\(getpid())"
        try Data(String(repeating: "ab", count: 16).utf8).write(to: URL(fileURLWithPath: kek))
        chmod(kek, 0o600)
        let credentials = try KSMBinary.privateCredentials("Fixtures/test-credentials/certificates.json")
        func localize(_ env: [String: String]) -> [String: String] {
            var env = env
            if env["KSM_CREDENTIALS"] != nil { env["KSM_CREDENTIALS"] = credentials }
            if let files = env["KSM_KEK_FILES"] {
                env["KSM_KEK_FILES"] = files.split(separator: ",").map { "\($0.split(separator: "=")[0])=\(kek)" }.joined(separator: ",")
            }
            return env
        }
        var checked = 0
        // Compose: services whose command starts with `serve`, environment merged from anchors by YAML.
        let compose = try Yams.load(yaml: String(contentsOf: root.appendingPathComponent("docker-compose.yml"), encoding: .utf8)) as? [String: Any]
        for (name, service) in (compose?["services"] as? [String: Any]) ?? [:] {
            guard let service = service as? [String: Any], let command = service["command"] as? [Any],
                command.first as? String == "serve"
            else { continue }
            let env = ((service["environment"] as? [String: Any]) ?? [:]).mapValues { "\($0)" }
            let result = try await Self.run(command.map { "\($0)" } + ["--check-config"], environment: localize(env))
            #expect(result.status == 0, "compose service \(name): \(Self.text(result.stderr))")
            checked += 1
        }
        // Kubernetes: the Deployment's container args and env, the ConfigMap it loads as env.
        let documents = try Yams.load_all(yaml: String(contentsOf: root.appendingPathComponent("kubernetes/deployment.yaml"), encoding: .utf8))
        var configMaps: [String: [String: String]] = [:]
        for file in try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("kubernetes/common").path) where file.hasSuffix(".yaml") {
            for case let doc as [String: Any] in try Yams.load_all(
                yaml: String(contentsOf: root.appendingPathComponent("kubernetes/common/\(file)"), encoding: .utf8))
            where doc["kind"] as? String == "ConfigMap" {
                let name = (doc["metadata"] as? [String: Any])?["name"] as? String ?? ""
                configMaps[name] = ((doc["data"] as? [String: Any]) ?? [:]).mapValues { "\($0)" }
            }
        }
        for case let doc as [String: Any] in documents where doc["kind"] as? String == "Deployment" {
            let spec = ((doc["spec"] as? [String: Any])?["template"] as? [String: Any])?["spec"] as? [String: Any]
            for case let container as [String: Any] in (spec?["containers"] as? [Any]) ?? [] {
                guard let args = container["args"] as? [Any], args.first as? String == "serve" else { continue }
                var env: [String: String] = [:]
                for case let source as [String: Any] in (container["envFrom"] as? [Any]) ?? [] {
                    if let name = (source["configMapRef"] as? [String: Any])?["name"] as? String { env.merge(configMaps[name] ?? [:]) { _, b in b } }
                }
                for case let variable as [String: Any] in (container["env"] as? [Any]) ?? [] {
                    guard let name = variable["name"] as? String else { continue }
                    // Secret references become placeholders: the value's shape is what is checked.
                    env[name] = (variable["value"] as? String) ?? (name == "KSM_REDIS_URL" ? "redis://:placeholder@redis:6379/0" : "placeholder")
                }
                let result = try await Self.run(args.map { "\($0)" } + ["--check-config"], environment: localize(env))
                #expect(result.status == 0, "Deployment container: \(Self.text(result.stderr))")
                checked += 1
            }
        }
        #expect(checked >= 2)
    }
}
