import FairPlay
import FairPlayDevice
import Foundation
import KSMService

/// The project's generated test credentials (Fixtures/test-credentials): the server side and what a
/// simulated device knows. Used by the load generator, the demo and the benchmarks; never production.
package struct TestCredentials {
    /// Why the fixtures could not be read; `description` says which file and what to do.
    package struct LoadError: OperatorFixableError, CustomStringConvertible {
        package var description: String
    }

    package let credentials: [ApplicationCredential]
    package let trust: DeviceTrust

    package init(directory: String) throws {
        let dir = URL(fileURLWithPath: directory)
        func file(_ name: String) throws -> [UInt8] {
            guard let data = FileManager.default.contents(atPath: dir.appendingPathComponent(name).path) else {
                throw LoadError(description: "cannot read \(name) in \(directory); run from the repository root or pass --fixtures")
            }
            return Array(data)
        }
        do {
            // The repository's published test credentials: git checks them out 0644, so no mode check.
            credentials = try CredentialsFile.load(path: dir.appendingPathComponent("certificates.json").path, access: .publicTestFixtures)
        } catch {
            throw LoadError(description: "\(error)")
        }
        guard case .applicationSecretKey(let ask) = credentials.first?.sessionKeySource else {
            throw LoadError(description: "test credentials in \(directory) must use an ASk")
        }
        trust = try DeviceTrust(
            certificateDER: try file("test_certificate.der"),
            publicKey2048: try RSAPublicKey(publicKeyPEMOrDER: try file("test_public_key_2048.pem")), ask: ask)
    }
}
