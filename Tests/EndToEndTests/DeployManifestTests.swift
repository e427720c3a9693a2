import Foundation
import KSMTestSupport
import Testing

/// deploy/ validated offline, as CI does: yamllint, kubernetes-validate, and the structural checks of
/// the KEDA ScaledObject, docker-compose.yml and the Dockerfile (scripts/validate-deploy.sh).
@Suite struct DeployManifestTests {
    @Test("scripts/validate-deploy.sh passes: manifests, compose file and Dockerfile are well formed")
    func validateDeploy() async throws {
        // One pipe for both streams keeps the script's messages in order.
        let result = try await ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["bash", KSMBinary.packageRoot.appendingPathComponent("scripts/validate-deploy.sh").path],
            currentDirectory: KSMBinary.packageRoot, mergeOutput: true, timeout: .seconds(300))
        let text = result.stdoutText
        #expect(
            result.succeeded,
            "scripts/validate-deploy.sh exited \(result.status):\n\(text)")
    }
}
