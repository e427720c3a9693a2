import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import KSMTestSupport
import Testing

/// deploy/kubernetes/deployment.yaml's worker container run as the kubelet would run it, without a
/// cluster: the image's entrypoint with the manifest's `args`, the ConfigMap's data as environment
/// (`envFrom`) and the Redis URL Secret's value, and each Secret volume laid out as Kubernetes lays
/// it out (the data in a timestamped directory, `..data` a symlink to it, every key a symlink
/// through `..data`, files at the volume's `defaultMode` and the pod's `fsGroup`). Substituted: the
/// brokers and Redis addresses, and the mount points (a directory per container path).
@Suite(.serialized, .timeLimit(.minutes(2)))
struct KubernetesDeploymentTests {
    static func yaml(_ path: String) throws -> [[String: Any]] {
        try DeployFiles.yaml(path).compactMap { $0 as? [String: Any] }
    }

    /// Lays out one Secret volume at `mount` as the kubelet does.
    static func secretVolume(at mount: URL, files: [String: Data], mode: Int) throws {
        let fm = FileManager.default
        let data = mount.appendingPathComponent("..2026_11_24_06_00_00.000000001")
        try fm.createDirectory(at: data, withIntermediateDirectories: true)
        for (key, content) in files {
            let file = data.appendingPathComponent(key)
            try content.write(to: file)
            #expect(chown(file.path, getuid(), getegid()) == 0)
            #expect(chmod(file.path, mode_t(mode)) == 0)
            try fm.createSymbolicLink(atPath: mount.appendingPathComponent(key).path, withDestinationPath: "..data/\(key)")
        }
        try fm.createSymbolicLink(atPath: mount.appendingPathComponent("..data").path, withDestinationPath: data.lastPathComponent)
    }

    @Test("The Deployment's worker starts from its Secret volumes (symlinks, 0440) and becomes ready")
    func deploymentWorkerBecomesReady() async throws {
        let deployment = try #require(try Self.yaml("deploy/kubernetes/deployment.yaml").first { $0["kind"] as? String == "Deployment" })
        let configMap = try #require(try Self.yaml("deploy/kubernetes/common/configmap.yaml").first { $0["kind"] as? String == "ConfigMap" })
        let pod = try #require((deployment["spec"] as? [String: Any])?["template"] as? [String: Any])
        let podSpec = try #require(pod["spec"] as? [String: Any])
        let container = try #require((podSpec["containers"] as? [[String: Any]])?.first)
        let args = try #require(container["args"] as? [String])

        let redis = try await RedisServerProcess()
        defer { redis.stop() }
        let broker = try RunningProcess("broker", ["broker", "--partitions", "6"], controlInput: true)
        let bootstrap = try await broker.firstLine()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("ksm-k8s-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        // Provisioned, as an operator would before the rollout (readiness needs the store's marker).
        let seeded = try KSMBinary.run(["admin", "seed-demo", "--redis-url", "redis://127.0.0.1:\(redis.port)/0", "--kek-out", root.path + "-demo-kek.hex"])
        #expect(seeded.status == 0, "\(String(decoding: seeded.stderr, as: UTF8.self))")
        defer { try? FileManager.default.removeItem(atPath: root.path + "-demo-kek.hex") }

        // The Secret volumes, from the pod's volumes and the container's mounts.
        var mounts: [String: String] = [:]
        for mount in container["volumeMounts"] as? [[String: Any]] ?? [] {
            if let name = mount["name"] as? String, let path = mount["mountPath"] as? String { mounts[name] = path }
        }
        let credentials = KSMBinary.packageRoot.appendingPathComponent("Fixtures/test-credentials")
        var credentialFiles: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: credentials.path) {
            credentialFiles[name] = try Data(contentsOf: credentials.appendingPathComponent(name))
        }
        let environment = (configMap["data"] as? [String: String]) ?? [:]
        // Each KEK the ConfigMap names gets a key of the ksm-kek Secret (16 random bytes, hex).
        var kekFiles: [String: Data] = [:]
        for pair in (environment["KSM_KEK_FILES"] ?? "").split(separator: ",") {
            let path = pair.split(separator: "=", maxSplits: 1).last.map(String.init) ?? ""
            kekFiles[URL(fileURLWithPath: path).lastPathComponent] = Data((0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined().utf8)
        }
        for volume in podSpec["volumes"] as? [[String: Any]] ?? [] {
            guard let name = volume["name"] as? String, let secret = volume["secret"] as? [String: Any], let path = mounts[name] else { continue }
            let mode = secret["defaultMode"] as? Int ?? 0o644
            let files = secret["secretName"] as? String == "ksm-credentials" ? credentialFiles : kekFiles
            try Self.secretVolume(at: URL(fileURLWithPath: root.path + path), files: files, mode: mode)
        }

        var env = environment.mapValues { value in
            value.replacingOccurrences(of: "/etc/ksm/", with: root.path + "/etc/ksm/")
        }
        env["KSM_KAFKA_BROKERS"] = bootstrap
        env["KSM_REDIS_URL"] = "redis://127.0.0.1:\(redis.port)/0"
        let port = try RedisServerProcess.freeLoopbackPort()
        env["KSM_ADMIN_PORT"] = "\(port)"
        let worker = try RunningProcess("k8s-worker", args, environment: env)
        let ready = try await DeployFiles.waitForReady(port: port) { worker.process.isRunning }
        #expect(ready, "the worker never became ready: \(worker.stderr.suffix(3000))")
        #expect(await worker.terminate() == 0)
    }
}
