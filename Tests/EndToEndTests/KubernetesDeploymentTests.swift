import FairPlay
import FairPlayDevice
import Foundation
import KSMLoad
import KSMService
import KSMTestSupport
import Licensing
import Testing
import Wire

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// deploy/kubernetes run as the kubelet would run it, without a cluster: the topics Job's container
/// (`ksm admin create-topics` with the workers' ConfigMap, against `ksm broker`, which has the
/// topics already: librdkafka's mock creates none), the provisioning Job's containers in order,
/// then the Deployment's worker, each the image's entrypoint with the
/// manifest's `args` (`$(VAR)` expanded from the container's env, as Kubernetes does), environment
/// from `envFrom` ConfigMaps and `valueFrom` references, and each Secret or ConfigMap volume laid out
/// as the kubelet lays it out (the data in a timestamped directory, `..data` a symlink to it, every
/// key a symlink through `..data`, files at the volume's `defaultMode` and the pod's group).
/// Substituted: the brokers and Redis addresses, the admin port, the mount points (a directory per
/// container path), and the Secrets' values (the test credentials and fresh random keys).
@Suite(.serialized, .timeLimit(.minutes(3)))
struct KubernetesDeploymentTests {
    static func documents(_ path: String) async throws -> [[String: Any]] {
        try await DeployFiles.yaml(path).compactMap { $0 as? [String: Any] }
    }

    static func random(bytes: Int) -> Data {
        Data(HexEncoding.encode((0..<bytes).map { _ in UInt8.random(in: 0...255) }).utf8)
    }

    /// What the cluster holds: ConfigMaps and Secrets by name, each key's bytes.
    struct Cluster {
        var configMaps: [String: [String: Data]] = [:]
        var secrets: [String: [String: Data]] = [:]
        /// Where this test puts the container paths.
        var root: URL

        /// Lays out one Secret or ConfigMap volume at `mount` as the kubelet does.
        func project(_ files: [String: Data], at mount: URL, mode: Int) throws {
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

        /// Mounts the container's volumes (once per mount point) and returns its arguments and
        /// environment, `$(VAR)` expanded and container paths moved under `root`.
        func prepare(_ container: [String: Any], podSpec: [String: Any]) throws -> (args: [String], environment: [String: String]) {
            var environment: [String: String] = [:]
            for source in container["envFrom"] as? [[String: Any]] ?? [] {
                let name = try #require((source["configMapRef"] as? [String: Any])?["name"] as? String)
                for (key, value) in try #require(configMaps[name], "no ConfigMap \(name)") { environment[key] = String(decoding: value, as: UTF8.self) }
            }
            for variable in container["env"] as? [[String: Any]] ?? [] {
                let name = try #require(variable["name"] as? String)
                if let value = variable["value"] as? String {
                    environment[name] = value
                    continue
                }
                let from = try #require(variable["valueFrom"] as? [String: Any])
                if let ref = from["secretKeyRef"] as? [String: Any] {
                    environment[name] = try #require(secrets[ref["name"] as? String ?? ""]?[ref["key"] as? String ?? ""]).utf8String
                } else if let ref = from["configMapKeyRef"] as? [String: Any] {
                    environment[name] = try #require(configMaps[ref["name"] as? String ?? ""]?[ref["key"] as? String ?? ""]).utf8String
                }
            }
            let volumes = podSpec["volumes"] as? [[String: Any]] ?? []
            for mount in container["volumeMounts"] as? [[String: Any]] ?? [] {
                let name = try #require(mount["name"] as? String)
                let target = URL(fileURLWithPath: root.path + (try #require(mount["mountPath"] as? String)))
                guard !FileManager.default.fileExists(atPath: target.path), let volume = volumes.first(where: { $0["name"] as? String == name }) else {
                    continue
                }
                if let secret = volume["secret"] as? [String: Any] {
                    let name = try #require(secret["secretName"] as? String)
                    // An optional Secret that does not exist is mounted as an empty directory.
                    let files = secret["optional"] as? Bool == true ? secrets[name] ?? [:] : try #require(secrets[name], "no Secret \(name)")
                    try project(files, at: target, mode: secret["defaultMode"] as? Int ?? 0o644)
                } else if let configMap = volume["configMap"] as? [String: Any] {
                    let name = try #require(configMap["name"] as? String)
                    var files = try #require(configMaps[name], "no ConfigMap \(name)")
                    if let items = configMap["items"] as? [[String: Any]] {
                        files = Dictionary(
                            uniqueKeysWithValues: try items.map { item in
                                (try #require(item["path"] as? String), try #require(files[item["key"] as? String ?? ""]))
                            })
                    }
                    try project(files, at: target, mode: configMap["defaultMode"] as? Int ?? 0o644)
                } else {
                    try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
                }
            }
            let localized = environment.mapValues { $0.replacingOccurrences(of: "/etc/ksm/", with: root.path + "/etc/ksm/") }
            let args = (container["args"] as? [Any] ?? []).map { argument in
                var text = "\(argument)"
                for (key, value) in environment { text = text.replacingOccurrences(of: "$(\(key))", with: value) }
                return text.replacingOccurrences(of: "/etc/ksm/", with: root.path + "/etc/ksm/")
            }
            return (args, localized)
        }
    }

    /// Runs a Job's init containers, then its containers, each to a zero exit; their standard output.
    func runJob(_ job: [String: Any], in cluster: Cluster) async throws -> [String: String] {
        let pod = try #require(((job["spec"] as? [String: Any])?["template"] as? [String: Any])?["spec"] as? [String: Any])
        var outputs: [String: String] = [:]
        for container in (pod["initContainers"] as? [[String: Any]] ?? []) + (pod["containers"] as? [[String: Any]] ?? []) {
            let (args, environment) = try cluster.prepare(container, podSpec: pod)
            let result = try await KSMBinary.run(args, environment: environment)
            let name = container["name"] as? String ?? "?"
            #expect(result.status == 0, "\(name): \(String(decoding: result.stderr, as: UTF8.self))")
            outputs[name] = String(decoding: result.stdout, as: UTF8.self)
        }
        return outputs
    }

    /// How the Kafka connection is set up: as shipped (no Secret for it), or with the ConfigMap's
    /// commented-out `KSM_KAFKA_PROPERTY_FILES` line taken in and a `ksm-kafka` Secret holding the
    /// file it names, so the documented path meets the Secret volume's layout and modes. librdkafka's
    /// mock speaks no SASL, so only the password file is added: it must be read and accepted.
    enum KafkaSecret: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case none = "as shipped"
        case passwordFile = "with the ksm-kafka password file"
        var testDescription: String { rawValue }
    }

    /// The value of the commented-out `#   KEY: "VALUE"` line of the ConfigMap's YAML.
    static func commentedSetting(_ key: String, in path: String) throws -> String {
        let text = try String(contentsOf: KSMBinary.packageRoot.appendingPathComponent(path), encoding: .utf8)
        let line = try #require(
            text.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("#   \(key): ") },
            "no commented \(key) in \(path)")
        return String(try #require(line.split(separator: "\"", omittingEmptySubsequences: false).dropFirst().first))
    }

    @Test(
        "The topics and provisioning Jobs and the Deployment's worker, run as the kubelet runs them, answer a job with the seed's key",
        arguments: KafkaSecret.allCases)
    func provisionedDeploymentAnswersJobs(kafkaSecret: KafkaSecret) async throws {
        let deployment = try #require(try await Self.documents("deploy/kubernetes/deployment.yaml").first { $0["kind"] as? String == "Deployment" })
        let job = try #require(try await Self.documents("deploy/kubernetes/provision/job.yaml").first { $0["kind"] as? String == "Job" })
        let topicsJob = try #require(try await Self.documents("deploy/kubernetes/topics/job.yaml").first { $0["kind"] as? String == "Job" })
        let redis = try await RedisServerProcess()
        defer { redis.stop() }
        // As many partitions as the topics Job asks for (12, the ScaledObject's maximum).
        let broker = try RunningProcess("broker", ["broker"], controlInput: true)
        let bootstrap = try await broker.firstLine()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("ksm-k8s-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }

        var cluster = Cluster(root: root)
        for path in ["deploy/kubernetes/common/configmap.yaml", "deploy/kubernetes/provision/tenant.yaml"] {
            for doc in try await Self.documents(path) where doc["kind"] as? String == "ConfigMap" {
                let name = try #require((doc["metadata"] as? [String: Any])?["name"] as? String)
                cluster.configMaps[name] = ((doc["data"] as? [String: String]) ?? [:]).mapValues { Data($0.utf8) }
            }
        }
        cluster.configMaps["ksm-config"]?["KSM_KAFKA_BROKERS"] = Data(bootstrap.utf8)
        let adminPort = try RedisServerProcess.freeLoopbackPort()
        cluster.configMaps["ksm-config"]?["KSM_ADMIN_PORT"] = Data("\(adminPort)".utf8)
        // The Secrets, with the keys secret.template.yaml names.
        let credentials = KSMBinary.packageRoot.appendingPathComponent("Fixtures/test-credentials")
        var credentialFiles: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: credentials.path) {
            credentialFiles[name] = try Data(contentsOf: credentials.appendingPathComponent(name))
        }
        cluster.secrets["ksm-credentials"] = credentialFiles
        let kekFiles = try #require(cluster.configMaps["ksm-config"]?["KSM_KEK_FILES"]?.utf8String)
        cluster.secrets["ksm-kek"] = Dictionary(
            uniqueKeysWithValues: kekFiles.split(separator: ",").map { pair in
                (URL(fileURLWithPath: String(pair.split(separator: "=", maxSplits: 1).last ?? "")).lastPathComponent, Self.random(bytes: 32))
            })
        let seed = Self.random(bytes: 32)
        cluster.secrets["ksm-key-seed"] = ["seed": seed]
        cluster.secrets["ksm-redis"] = ["url": Data(redis.url.utf8)]
        if kafkaSecret == .passwordFile {
            let files = try Self.commentedSetting("KSM_KAFKA_PROPERTY_FILES", in: "deploy/kubernetes/common/configmap.yaml")
            cluster.configMaps["ksm-config"]?["KSM_KAFKA_PROPERTY_FILES"] = Data(files.utf8)
            let path = try #require(files.split(separator: "=", maxSplits: 1).last)
            #expect(path.hasPrefix("/etc/ksm/kafka/"), "the Secret volume is mounted at /etc/ksm/kafka: \(files)")
            // As `kubectl create secret --from-file` stores a file written by echo: a trailing line break.
            cluster.secrets["ksm-kafka"] = [URL(fileURLWithPath: String(path)).lastPathComponent: Self.random(bytes: 24) + Data("\n".utf8)]
        }

        // The topics Job finds every topic the workers read, the class topics the ConfigMap turns on
        // included, with the partitions the ScaledObject assumes; then the provisioning Job.
        let topics = try await runJob(topicsJob, in: cluster).values.joined()
        let requests = try #require(cluster.configMaps["ksm-config"]?["KSM_REQUESTS_TOPIC"]?.utf8String)
        #expect(cluster.configMaps["ksm-config"]?["KSM_CLASS_TOPICS"]?.utf8String == "true")
        for topic in [requests, "\(requests).continuity", "\(requests).new", "\(requests).prefetch"] {
            #expect(topics.contains("\(topic): exists, 12 partitions"), "\(topic): \(topics)")
        }
        for key in ["KSM_REPLIES_TOPIC", "KSM_DLQ_TOPIC"] {
            let topic = try #require(cluster.configMaps["ksm-config"]?[key]?.utf8String)
            #expect(topics.contains("\(topic): exists"), "\(topic): \(topics)")
        }
        _ = try await runJob(job, in: cluster)

        // The worker: ready, then a job for the Job's tenant answered with the seed's key.
        let podSpec = try #require(((deployment["spec"] as? [String: Any])?["template"] as? [String: Any])?["spec"] as? [String: Any])
        let (args, environment) = try cluster.prepare(try #require((podSpec["containers"] as? [[String: Any]])?.first), podSpec: podSpec)
        let worker = try RunningProcess("k8s-worker", args, environment: environment)
        let ready = try await DeployFiles.waitForReady(port: adminPort) { worker.isRunning }
        try #require(ready, "the worker never became ready: \(worker.stderr.suffix(3000))")

        let tenant = try #require(cluster.configMaps["ksm-tenant"]?["tenant"]?.utf8String)
        let client = try await FleetClient(bootstrap: bootstrap, catalog: DemoCatalog())
        let asset = "skd://\(tenant)/live-1"
        var options = SPCOptions()
        options.assetID = Array(asset.utf8)
        options.playback = MediaPlaybackInfo(creationDate: UInt32(Date().timeIntervalSince1970), state: .readyToPlay, sessionID: 7)
        let (spc, session) = try SimulatedDevice(trust: client.trust).makeSPC(options)
        let request = LicenseJob(id: try StoreIdentifier("k8s-1"), tenant: try StoreIdentifier(tenant), account: try StoreIdentifier("viewer-1"), spc: spc)
        try await client.sendRaw(request.jsonBytes(), key: "viewer-1")
        let reply = try await client.reply("k8s-1", timeout: .seconds(60))
        await client.close()
        let ckc = try #require(reply.ckc, "no CKC: \(reply)")
        let seedBytes = try #require([UInt8](hexString: seed.utf8String))
        let opened = try CKCOpener.open(ckc, session: session)
        #expect(opened.contentKey == (try ContentKeyDerivation.derive(seed: seedBytes, assetID: Array(asset.utf8))).key)
        #expect(opened.keyDuration?.keyType == .lease, "the Job's policy grants a lease")
        #expect(await worker.terminate() == 0)
    }
}

extension Data {
    fileprivate var utf8String: String { String(decoding: self, as: UTF8.self) }
}
