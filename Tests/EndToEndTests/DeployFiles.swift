import Foundation
import KSMLoad
import KSMTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the deployment tests share: deploy/'s YAML read as compose and the kubelet read it, and a
/// worker's readiness asked of its admin port (the machine channel, never log text).
enum DeployFiles {
    /// Every document of a YAML file under the package root, as JSON values (PyYAML resolves the
    /// `<<:` merges and anchors as compose does).
    static func yaml(_ path: String) async throws -> [Any] {
        let script = "import json, sys, yaml; json.dump(list(yaml.safe_load_all(open(sys.argv[1]))), sys.stdout)"
        let result = try await ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, KSMBinary.packageRoot.appendingPathComponent(path).path],
            timeout: .seconds(120))
        guard result.succeeded, let documents = try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [Any] else {
            throw ProcessFailure(description: "could not read \(path) with python3 + PyYAML (scripts/install-deps.sh installs it)")
        }
        return documents
    }

    /// Polls `/readyz` until it answers 200 (true) or `timeout` passes, or `alive` turns false.
    static func waitForReady(port: Int, timeout: Duration = .seconds(60), alive: () -> Bool = { true }) async throws -> Bool {
        let url = try #require(URL(string: "http://127.0.0.1:\(port)/readyz"))
        let deadline = ContinuousClock.now + timeout
        while alive(), ContinuousClock.now < deadline {
            if let (_, response) = try? await URLSession.shared.data(from: url), (response as? HTTPURLResponse)?.statusCode == 200 { return true }
            try await Task.sleep(for: .milliseconds(250))
        }
        return false
    }
}
