import Foundation
import Testing

/// deploy/ validated offline, as CI does: yamllint, kubernetes-validate, and the structural checks of
/// the KEDA ScaledObject, docker-compose.yml and the Dockerfile (scripts/validate-deploy.sh).
@Suite struct DeployManifestTests {
    @Test("scripts/validate-deploy.sh passes: manifests, compose file and Dockerfile are well formed")
    func validateDeploy() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["bash", KSMBinary.packageRoot.appendingPathComponent("scripts/validate-deploy.sh").path]
        process.currentDirectoryURL = KSMBinary.packageRoot
        process.standardInput = FileHandle.nullDevice
        // One pipe for both streams keeps the script's messages in order, and cannot fill up
        // unread: it is drained before waiting.
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        #expect(process.terminationReason == .exit && process.terminationStatus == 0,
                "scripts/validate-deploy.sh exited \(process.terminationStatus):\n\(text)")
    }
}
