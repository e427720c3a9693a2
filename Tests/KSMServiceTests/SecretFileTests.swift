import FairPlay
import Foundation
import KSMService
import Testing

/// Secret files are refused when group or others may read them; the message names the path and
/// the fix. The repository's fixtures (0644 on a fresh clone) load only as public test fixtures.
@Suite struct SecretFileTests {
    /// A private copy of Fixtures/test-credentials with every file at `mode`.
    static func copy(mode: Int) throws -> URL {
        let target = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("ksm-secret-test-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: Fixtures.packageRoot.appendingPathComponent("Fixtures/test-credentials"), to: target)
        for name in try FileManager.default.contentsOfDirectory(atPath: target.path) {
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: target.appendingPathComponent(name).path)
        }
        return target
    }

    @Test(arguments: [0o644, 0o640, 0o604, 0o660])
    func readableByOthersIsRefused(mode: Int) throws {
        let dir = try Self.copy(mode: mode)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("test_ask.hex").path
        #expect(throws: SecretFileError.self) { try SecretFile.read(path) }
        do {
            _ = try SecretFile.read(path)
        } catch {
            #expect(error.description.contains(path) && error.description.contains("chmod 600"), "\(error)")
        }
        // The credentials loader applies the same rule to the private keys and the ASk.
        do {
            _ = try CredentialsFile.load(path: dir.appendingPathComponent("certificates.json").path)
            Issue.record("credentials with mode \(String(mode, radix: 8)) were accepted")
        } catch {
            #expect(error.description.contains("chmod 600"), "\(error)")
        }
        // ... unless they are the repository's public test fixtures, loaded as such.
        #expect(try CredentialsFile.load(path: dir.appendingPathComponent("certificates.json").path, access: .publicTestFixtures).count == 1)
    }

    @Test func ownerOnlyFilesLoad() throws {
        for mode in [0o600, 0o400, 0o700] {
            let dir = try Self.copy(mode: mode)
            defer { try? FileManager.default.removeItem(at: dir) }
            #expect(try SecretFile.read(dir.appendingPathComponent("test_ask.hex").path).count == 33)
            #expect(try CredentialsFile.load(path: dir.appendingPathComponent("certificates.json").path).count == 1)
        }
    }

    @Test func missingFileSaysSo() {
        #expect(throws: SecretFileError.self) { try SecretFile.read("/nonexistent/ksm-secret") }
    }
}
