import KSMLoad
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// What the deployment tests share: deploy/'s YAML read as compose and the kubelet read it, and a
/// worker's readiness asked of its admin port (the machine channel, never log text).
enum DeployFiles {
    /// Every document of a YAML file under the package root, as JSON values (PyYAML resolves the
    /// `<<:` merges and anchors as compose does).
    static func yaml(_ path: String) throws -> [Any] {
        let script = "import json, sys, yaml; json.dump(list(yaml.safe_load_all(open(sys.argv[1]))), sys.stdout)"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, KSMBinary.packageRoot.appendingPathComponent(path).path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let documents = try JSONSerialization.jsonObject(with: data) as? [Any] else {
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
