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
/// The key provider (deploy/kubernetes/speke) is run the same way after the provisioning Job, its
/// listening address the one substitution more, as shipped and with the documented TLS Secret; the
/// edge (deploy/kubernetes/edge) too, in front of the worker, its pod name given by the downward API
/// as the kubelet gives it.
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
        /// `metadata.name` of the pod being run, for the downward API's `fieldRef`.
        var podName = "ksm-pod"

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
                } else if let ref = from["fieldRef"] as? [String: Any] {
                    // The downward API; only the pod's name is used by these manifests.
                    let path = ref["fieldPath"] as? String
                    #expect(path == "metadata.name", "fieldRef \(String(describing: path)) is not simulated")
                    environment[name] = podName
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

    /// The ConfigMaps of deploy/kubernetes (the workers', the tenant's, the key provider's) and the
    /// Secrets with the keys secret.template.yaml names: the test credentials, a random KEK per
    /// KSM_KEK_FILES entry, a random key seed, and `redisURL`.
    /// What an HTTP service's manifests promise (`ksm speke`, `ksm edge`, by `name`): its container
    /// runs `ksm <name>`, its probes GET `/readyz` and `/healthz` on its one port, its ConfigMap
    /// `ksm-<name>` listens on that port (`KSM_<NAME>_LISTEN`), and the Service maps port 80 to it.
    static func checkHTTPService(
        deployment: [String: Any], service: [String: Any], cluster: Cluster, name: String
    ) throws -> (podSpec: [String: Any], container: [String: Any]) {
        let spec = try #require(deployment["spec"] as? [String: Any])
        let podSpec = try #require((spec["template"] as? [String: Any])?["spec"] as? [String: Any])
        let container = try #require((podSpec["containers"] as? [[String: Any]])?.first)
        #expect(container["args"] as? [String] == [name])
        let containerPort = try #require((container["ports"] as? [[String: Any]])?.first)
        let key = "KSM_\(name.uppercased())_LISTEN"
        let listen = try #require(cluster.configMaps["ksm-\(name)"]?[key]?.utf8String)
        #expect(listen == "0.0.0.0:\(containerPort["containerPort"] as? Int ?? 0)", "\(key) \(listen) is not the container port")
        for (probe, path) in [("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")] {
            let get = (container[probe] as? [String: Any])?["httpGet"] as? [String: Any]
            #expect(get?["path"] as? String == path && get?["port"] as? String == containerPort["name"] as? String, "\(probe): \(String(describing: get))")
        }
        let servicePort = try #require(((service["spec"] as? [String: Any])?["ports"] as? [[String: Any]])?.first)
        #expect(servicePort["port"] as? Int == 80 && servicePort["targetPort"] as? String == containerPort["name"] as? String)
        return (podSpec, container)
    }

    /// TLS as an operator turns it on for `ksm <name>`: the ConfigMap's commented-out
    /// `KSM_<NAME>_TLS_*` lines set (the files under the `ksm-<name>-tls` Secret's mount,
    /// `/etc/ksm/<name>-tls/`), and that Secret made from a new self-signed certificate, returned
    /// for the caller to trust and remove.
    static func installTLS(in cluster: inout Cluster, name: String) async throws -> SelfSignedCertificate {
        let made = try await SelfSignedCertificate.make()
        for key in ["KSM_\(name.uppercased())_TLS_CERTIFICATE", "KSM_\(name.uppercased())_TLS_PRIVATE_KEY"] {
            let path = try Self.commentedSetting(key, in: "deploy/kubernetes/\(name)/configmap.yaml")
            #expect(path.hasPrefix("/etc/ksm/\(name)-tls/"), "the TLS Secret is mounted at /etc/ksm/\(name)-tls: \(path)")
            cluster.configMaps["ksm-\(name)"]?[key] = Data(path.utf8)
        }
        cluster.secrets["ksm-\(name)-tls"] = [
            "tls.crt": try Data(contentsOf: URL(fileURLWithPath: made.certificatePath)),
            "tls.key": try Data(contentsOf: URL(fileURLWithPath: made.privateKeyPath)),
        ]
        return made
    }

    static func provisionedCluster(root: URL, redisURL: String) async throws -> Cluster {
        var cluster = Cluster(root: root)
        for path in [
            "deploy/kubernetes/common/configmap.yaml", "deploy/kubernetes/provision/tenant.yaml", "deploy/kubernetes/speke/configmap.yaml",
            "deploy/kubernetes/edge/configmap.yaml",
        ] {
            for doc in try await Self.documents(path) where doc["kind"] as? String == "ConfigMap" {
                let name = try #require((doc["metadata"] as? [String: Any])?["name"] as? String)
                cluster.configMaps[name] = ((doc["data"] as? [String: String]) ?? [:]).mapValues { Data($0.utf8) }
            }
        }
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
        cluster.secrets["ksm-key-seed"] = ["seed": Self.random(bytes: 32)]
        cluster.secrets["ksm-redis"] = ["url": Data(redisURL.utf8)]
        return cluster
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

        var cluster = try await Self.provisionedCluster(root: root, redisURL: redis.url)
        let seed = try #require(cluster.secrets["ksm-key-seed"]?["seed"])
        cluster.configMaps["ksm-config"]?["KSM_KAFKA_BROKERS"] = Data(bootstrap.utf8)
        let adminPort = try RedisServerProcess.freeLoopbackPort()
        cluster.configMaps["ksm-config"]?["KSM_ADMIN_PORT"] = Data("\(adminPort)".utf8)
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

extension KubernetesDeploymentTests {
    /// How the key provider's pod is set up: as shipped (plain HTTP, TLS at the ingress), or with
    /// the ksm-speke ConfigMap's commented-out TLS lines taken in and a `ksm-speke-tls` Secret holding
    /// a certificate and key (`kubectl create secret tls` keys), so the documented path meets the
    /// Secret volume's layout and modes.
    enum SpekeTransport: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case plain = "as shipped, plain HTTP"
        case tls = "with the ksm-speke-tls Secret"
        var testDescription: String { rawValue }
    }

    @Test(
        "The provisioning Job, then the key provider's Deployment run as the kubelet runs it: ready, and a packager's request answered with the seed's keys",
        arguments: SpekeTransport.allCases)
    func spekeDeploymentAnswersPackagers(transport: SpekeTransport) async throws {
        let docs = try await Self.documents("deploy/kubernetes/speke/deployment.yaml") + Self.documents("deploy/kubernetes/speke/service.yaml")
        let deployment = try #require(docs.first { $0["kind"] as? String == "Deployment" })
        let service = try #require(docs.first { $0["kind"] as? String == "Service" })
        let job = try #require(try await Self.documents("deploy/kubernetes/provision/job.yaml").first { $0["kind"] as? String == "Job" })
        let redis = try await RedisServerProcess()
        defer { redis.stop() }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("ksm-k8s-speke-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        var cluster = try await Self.provisionedCluster(root: root, redisURL: redis.url)
        let seed = try #require(cluster.secrets["ksm-key-seed"]?["seed"])

        // What the manifests promise: two replicas, probes on the service's port, the Service's
        // port 80 reaching the port the ConfigMap listens on.
        let spec = try #require(deployment["spec"] as? [String: Any])
        #expect(spec["replicas"] as? Int == 2)
        let (podSpec, container) = try Self.checkHTTPService(deployment: deployment, service: service, cluster: cluster, name: "speke")

        var certificate: SelfSignedCertificate?
        defer { certificate?.remove() }
        if transport == .tls { certificate = try await Self.installTLS(in: &cluster, name: "speke") }

        // The tenant, as the provisioning Job writes it; a packager credential, as an operator makes one.
        _ = try await runJob(job, in: cluster)
        let tenant = try #require(cluster.configMaps["ksm-tenant"]?["tenant"]?.utf8String)
        let created = try await KSMBinary.run(["admin", "put-packager-credential", "--redis-url", redis.url, "--tenant", tenant, "--id", "packager"])
        #expect(created.status == 0, "\(String(decoding: created.stderr, as: UTF8.self))")
        let token = try #require(String(decoding: created.stdout, as: UTF8.self).split(separator: "\n").last.map(String.init))

        let port = try RedisServerProcess.freeLoopbackPort()
        cluster.configMaps["ksm-speke"]?["KSM_SPEKE_LISTEN"] = Data("127.0.0.1:\(port)".utf8)
        let (args, environment) = try cluster.prepare(container, podSpec: podSpec)
        let speke = try RunningProcess("k8s-speke", args, environment: environment)
        defer { speke.kill() }
        let scheme = transport == .tls ? "https" : "http"
        let ready = try await Curl.waitForReady("\(scheme)://localhost:\(port)/readyz", caCertificate: certificate?.certificatePath) { speke.isRunning }
        try #require(ready, "the key provider never became ready: \(speke.stderr.suffix(3000))")

        let answer = try await Curl.post(
            "\(scheme)://localhost:\(port)/speke/v2/\(tenant)/copyProtection", body: Array(SpekeServiceTests.fairPlayRequest.utf8),
            headers: ["Authorization": "Bearer \(token)", "X-Speke-Version": "2.0"], caCertificate: certificate?.certificatePath)
        #expect(answer.status == 200, "\(answer)")
        let keys = try SpekeServiceTests.fairPlayKeys(answer.body)
        #expect(keys.count == 2)
        // The tenant holds the Job's key seed, so every key is derived from it and its URI: what a
        // worker puts in the CKC for that URI.
        let seedBytes = try #require([UInt8](hexString: seed.utf8String))
        for key in keys {
            #expect(key.key == (try ContentKeyDerivation.derive(seed: seedBytes, assetID: Array(key.uri.utf8))).key, "\(key.uri)")
        }
        if transport == .tls {
            let plain = try await Curl.get("http://127.0.0.1:\(port)/healthz", caCertificate: nil)
            #expect(plain.status == nil, "plain HTTP answered on the TLS port: \(plain)")
        }
        #expect(await speke.terminate() == 0)
    }
}

extension KubernetesDeploymentTests {
    /// How the edge's pod is set up: as shipped (plain HTTP, TLS at the ingress), or with the ksm-edge
    /// ConfigMap's commented-out TLS lines taken in and a `ksm-edge-tls` Secret.
    enum EdgeTransport: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case plain = "as shipped, plain HTTP"
        case tls = "with the ksm-edge-tls Secret"
        var testDescription: String { rawValue }
    }

    @Test(
        "The topics and provisioning Jobs, a worker, then two of the edge's pods run as the kubelet runs them: each its own reply topic from its name, a device's SPC answered with the seed's key",
        arguments: EdgeTransport.allCases)
    func edgeDeploymentAnswersDevices(transport: EdgeTransport) async throws {
        let docs = try await Self.documents("deploy/kubernetes/edge/deployment.yaml") + Self.documents("deploy/kubernetes/edge/service.yaml")
        let deployment = try #require(docs.first { $0["kind"] as? String == "Deployment" })
        let service = try #require(docs.first { $0["kind"] as? String == "Service" })
        let workerDeployment = try #require(try await Self.documents("deploy/kubernetes/deployment.yaml").first { $0["kind"] as? String == "Deployment" })
        let job = try #require(try await Self.documents("deploy/kubernetes/provision/job.yaml").first { $0["kind"] as? String == "Job" })
        let topicsJob = try #require(try await Self.documents("deploy/kubernetes/topics/job.yaml").first { $0["kind"] as? String == "Job" })
        let redis = try await RedisServerProcess()
        defer { redis.stop() }
        let broker = try RunningProcess("broker", ["broker"], controlInput: true)
        let bootstrap = try await broker.firstLine()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("ksm-k8s-edge-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        var cluster = try await Self.provisionedCluster(root: root, redisURL: redis.url)
        let seed = try #require(cluster.secrets["ksm-key-seed"]?["seed"])
        cluster.configMaps["ksm-config"]?["KSM_KAFKA_BROKERS"] = Data(bootstrap.utf8)
        let adminPort = try RedisServerProcess.freeLoopbackPort()
        cluster.configMaps["ksm-config"]?["KSM_ADMIN_PORT"] = Data("\(adminPort)".utf8)

        // What the manifests promise: probes on the container's port, the Service's port 80 reaching
        // the port the ConfigMap listens on, the instance ID from the pod's name.
        let spec = try #require(deployment["spec"] as? [String: Any])
        #expect(spec["replicas"] == nil, "the replica count is KEDA's")
        let (podSpec, container) = try Self.checkHTTPService(deployment: deployment, service: service, cluster: cluster, name: "edge")

        var certificate: SelfSignedCertificate?
        defer { certificate?.remove() }
        if transport == .tls { certificate = try await Self.installTLS(in: &cluster, name: "edge") }

        // The topics the workers read (the edge produces to them), the tenant, one worker.
        _ = try await runJob(topicsJob, in: cluster)
        _ = try await runJob(job, in: cluster)
        let workerPod = try #require(((workerDeployment["spec"] as? [String: Any])?["template"] as? [String: Any])?["spec"] as? [String: Any])
        let (workerArgs, workerEnvironment) = try cluster.prepare(try #require((workerPod["containers"] as? [[String: Any]])?.first), podSpec: workerPod)
        let worker = try RunningProcess("k8s-worker", workerArgs, environment: workerEnvironment)
        defer { worker.kill() }
        let workerReady = try await DeployFiles.waitForReady(port: adminPort) { worker.isRunning }
        try #require(workerReady, "the worker never became ready: \(worker.stderr.suffix(3000))")

        // Two pods of the Deployment, each with its name, mounts (the same Secrets) and port.
        let tenant = try #require(cluster.configMaps["ksm-tenant"]?["tenant"]?.utf8String)
        let scheme = transport == .tls ? "https" : "http"
        var pods: [(process: RunningProcess, port: Int, name: String)] = []
        defer { for pod in pods { pod.process.kill() } }
        for name in ["ksm-edge-7d9f8c6b5-x2x4z", "ksm-edge-7d9f8c6b5-q8r7t"] {
            var podCluster = cluster
            podCluster.podName = name
            let port = try RedisServerProcess.freeLoopbackPort()
            podCluster.configMaps["ksm-edge"]?["KSM_EDGE_LISTEN"] = Data("127.0.0.1:\(port)".utf8)
            let (args, environment) = try podCluster.prepare(container, podSpec: podSpec)
            #expect(environment["KSM_EDGE_INSTANCE_ID"] == name)
            let edge = try RunningProcess("k8s-\(name)", args, environment: environment)
            pods.append((edge, port, name))
            let ready = try await Curl.waitForReady("\(scheme)://localhost:\(port)/readyz", caCertificate: certificate?.certificatePath) {
                edge.isRunning
            }
            try #require(ready, "\(name) never became ready: \(edge.stderr.suffix(3000))")
            let readiness = try await Curl.get("\(scheme)://localhost:\(port)/readyz", caCertificate: certificate?.certificatePath)
            #expect(
                String(decoding: readiness.body, as: UTF8.self).contains("reply topic fps.license.replies.edge.\(name) assigned"),
                "\(readiness)")
        }

        // A device asks each pod; each CKC opens to the key the Job's seed derives for the asset.
        let client = try await FleetClient(bootstrap: bootstrap, catalog: DemoCatalog())
        let device = SimulatedDevice(trust: client.trust)
        await client.close()
        let asset = "skd://\(tenant)/live-1"
        let seedBytes = try #require([UInt8](hexString: seed.utf8String))
        let expected = try ContentKeyDerivation.derive(seed: seedBytes, assetID: Array(asset.utf8)).key
        for (index, pod) in pods.enumerated() {
            var options = SPCOptions()
            options.assetID = Array(asset.utf8)
            options.playback = MediaPlaybackInfo(creationDate: UInt32(Date().timeIntervalSince1970), state: .readyToPlay, sessionID: UInt64(7 + index))
            let (spc, session) = try device.makeSPC(options)
            let answer = try await Curl.post(
                "\(scheme)://localhost:\(pod.port)/fps/\(tenant)/license", body: spc,
                headers: ["Content-Type": "application/octet-stream", "X-Account": "viewer-\(index)"], caCertificate: certificate?.certificatePath)
            #expect(answer.status == 200, "\(pod.name): \(answer) \(pod.process.stderr.suffix(2000))")
            guard answer.status == 200 else { continue }
            let opened = try CKCOpener.open(answer.body, session: session)
            #expect(opened.contentKey == expected, "\(pod.name)")
            #expect(opened.keyDuration?.keyType == .lease, "the Job's policy grants a lease")
        }
        if transport == .tls, let pod = pods.first {
            let plain = try await Curl.get("http://127.0.0.1:\(pod.port)/healthz", caCertificate: nil)
            #expect(plain.status == nil, "plain HTTP answered on the TLS port: \(plain)")
        }
        for pod in pods { #expect(await pod.process.terminate() == 0, "\(pod.name)") }
        #expect(await worker.terminate() == 0)
    }
}
