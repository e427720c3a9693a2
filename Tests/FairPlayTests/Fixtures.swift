import FairPlay
import FairPlayDevice
import Foundation
import Wire

/// Paths to test data: the project's Fixtures/ and the team's ../shared beside the checkout.
enum Fixtures {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let shared = packageRoot.deletingLastPathComponent().appendingPathComponent("shared")
    static let appleVectors = shared.appendingPathComponent("vectors/apple-sdk-2.0.3")

    static func bytes(_ url: URL) throws -> [UInt8] { Array(try Data(contentsOf: url)) }
    static func project(_ path: String) throws -> [UInt8] { try bytes(packageRoot.appendingPathComponent(path)) }
    static func apple(_ path: String) throws -> [UInt8] { try bytes(appleVectors.appendingPathComponent(path)) }

    /// Apple's development credential: fixed DASk, 1024-bit key.
    static func appleCredential() throws -> ApplicationCredential {
        try ApplicationCredential(
            name: "apple-dev",
            certificateDER: try apple("credentials/dev_certificate.der"),
            privateKey1024: try RSAPrivateKey(pemOrDER: try apple("credentials/dev_private_key.pem")),
            privateKey2048: nil,
            sessionKeySource: .fixedDerivedKey([UInt8](hexString: "d87ce7a26081de2e8eb8acef3a6dc179")!))
    }

    static let testASk: [UInt8] = {
        let text = (try? String(contentsOf: packageRoot.appendingPathComponent("Fixtures/test-credentials/test_ask.hex"), encoding: .utf8)) ?? ""
        return [UInt8](hexString: text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? []
    }()

    /// The project's generated test credential (legacy ASk, 1024- and 2048-bit keys).
    static func testCredential() throws -> ApplicationCredential {
        try ApplicationCredential(
            name: "test",
            certificateDER: try project("Fixtures/test-credentials/test_certificate.der"),
            privateKey1024: try RSAPrivateKey(pemOrDER: try project("Fixtures/test-credentials/test_private_key_1024.pem")),
            privateKey2048: try RSAPrivateKey(pemOrDER: try project("Fixtures/test-credentials/test_private_key_2048.pem")),
            sessionKeySource: .applicationSecretKey(testASk))
    }

    static func testTrust() throws -> DeviceTrust {
        try DeviceTrust(
            certificateDER: try project("Fixtures/test-credentials/test_certificate.der"),
            publicKey2048: try RSAPublicKey(publicKeyPEMOrDER: try project("Fixtures/test-credentials/test_public_key_2048.pem")),
            ask: testASk)
    }

    static func testServer(versions: [UInt32] = []) throws -> KeyServerModule {
        KeyServerModule(credentials: try CredentialStore([try testCredential()]), versionPolicy: ProtocolVersionPolicy(accepted: versions))
    }
}
