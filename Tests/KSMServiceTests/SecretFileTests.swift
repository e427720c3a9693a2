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

    @Test(arguments: [0o644, 0o604, 0o660, 0o606, 0o666])
    func readableByOthersIsRefused(mode: Int) throws {
        let dir = try Self.copy(mode: mode)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("test_ask.hex").path
        #expect(throws: SecretFileError.self) { try SecretFile.read(path) }
        do {
            _ = try SecretFile.read(path)
        } catch {
            #expect(
                error.description.contains(path) && error.description.contains("chmod 600") && error.description.contains(String(mode, radix: 8)), "\(error)")
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

    /// Lays a file out as a Kubernetes Secret volume does: the data in a timestamped directory, a
    /// `..data` symlink to it, and the key as a symlink through `..data`.
    static func kubernetesLayout(mode: Int, group: gid_t? = nil, owner: uid_t? = nil) throws -> (directory: URL, path: String) {
        let dir = try copy(mode: 0o600)
        let data = dir.appendingPathComponent("..2026_11_24_06_00_00.000000001")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: false)
        try FileManager.default.moveItem(at: dir.appendingPathComponent("test_ask.hex"), to: data.appendingPathComponent("test_ask.hex"))
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("..data").path, withDestinationPath: data.lastPathComponent)
        let link = dir.appendingPathComponent("test_ask.hex").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "..data/test_ask.hex")
        let target = data.appendingPathComponent("test_ask.hex").path
        if group != nil || owner != nil { #expect(chown(target, owner ?? getuid(), group ?? getgid()) == 0) }
        #expect(chmod(target, mode_t(mode)) == 0)
        return (dir, link)
    }

    @Test("Kubernetes Secret volumes load: symlinks followed, 0440 and 0400 with the pod's group, root-owned")
    func kubernetesSecretVolumesLoad() throws {
        for mode in [0o440, 0o400, 0o640] {
            let (dir, path) = try Self.kubernetesLayout(mode: mode, group: getegid())
            defer { try? FileManager.default.removeItem(at: dir) }
            #expect(try SecretFile.read(path).count == 33, "mode \(String(mode, radix: 8))")
        }
        // The link itself is 0777; the file it ends at decides. 0444 is readable by everyone.
        let (dir, path) = try Self.kubernetesLayout(mode: 0o444)
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect { try SecretFile.read(path) } throws: { ($0 as? SecretFileError)?.reason.contains("mode 444") == true }
    }

    @Test("A group this process is not in, or another non-root owner, may not hold a secret", .enabled(if: geteuid() == 0, "needs root to chown"))
    func foreignGroupOrOwnerIsRefused() throws {
        let (dir, path) = try Self.kubernetesLayout(mode: 0o440, group: 54_321)
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect { try SecretFile.read(path) } throws: { ($0 as? SecretFileError)?.reason.contains("group 54321") == true }
        let (other, otherPath) = try Self.kubernetesLayout(mode: 0o600, owner: 54_321)
        defer { try? FileManager.default.removeItem(at: other) }
        #expect { try SecretFile.read(otherPath) } throws: { ($0 as? SecretFileError)?.reason.contains("user 54321") == true }
    }

    @Test func ownerOnlyFilesLoad() throws {
        for mode in [0o600, 0o400, 0o700] {
            let dir = try Self.copy(mode: mode)
            defer { try? FileManager.default.removeItem(at: dir) }
            #expect(try SecretFile.read(dir.appendingPathComponent("test_ask.hex").path).count == 33)
            #expect(try CredentialsFile.load(path: dir.appendingPathComponent("certificates.json").path).count == 1)
        }
    }

    @Test("secrets named env:NAME in certificates.json come from the environment, which forgets them once read")
    func secretsFromEnvironment() throws {
        let dir = try Self.copy(mode: 0o600)
        defer { try? FileManager.default.removeItem(at: dir) }
        let tag = UUID().uuidString.replacingOccurrences(of: "-", with: "")
        let names = ["KSM_TEST_ASK_\(tag)", "KSM_TEST_KEY1024_\(tag)", "KSM_TEST_KEY2048_\(tag)"]
        for (name, file) in zip(names, ["test_ask.hex", "test_private_key_1024.pem", "test_private_key_2048.pem"]) {
            setenv(name, try String(contentsOf: dir.appendingPathComponent(file), encoding: .utf8), 1)
            try FileManager.default.removeItem(at: dir.appendingPathComponent(file))
        }
        let json =
            #"{"certificates": [{"certificate": "test_certificate.der", "ask": "env:\#(names[0])", "1024-private-key": "env:\#(names[1])", "2048-private-key": "env:\#(names[2])"}]}"#
        let path = dir.appendingPathComponent("certificates.json").path
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        let loaded = try CredentialsFile.load(path: path)
        #expect(loaded.count == 1)
        let fromFiles = try CredentialsFile.load(
            path: Fixtures.packageRoot.appendingPathComponent("Fixtures/test-credentials/certificates.json").path, access: .publicTestFixtures)
        #expect(loaded.first?.certificateHash == fromFiles.first?.certificateHash)
        for name in names { #expect(getenv(name) == nil, "\(name) still in the environment") }
        // A second load finds the variables gone, and says which one.
        do {
            _ = try CredentialsFile.load(path: path)
            Issue.record("loaded without the environment variables")
        } catch {
            #expect(error.description.contains("environment variable \(names[0]) is not set"), "\(error)")
        }
    }

    @Test func missingFileSaysSo() {
        #expect(throws: SecretFileError.self) { try SecretFile.read("/nonexistent/ksm-secret") }
    }
}

/// What ``SecretFile`` opens is what it judges: one descriptor, its `fstat`, then its bytes.
@Suite struct SecretFileDescriptorTests {
    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ksm-secret-fd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test("A FIFO, a directory and a missing path are refused without blocking; the reason names the path")
    func nonRegularFilesAreRefused() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fifo = dir.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        // Opening a FIFO without a writer would block a plain open; the refusal must come at once.
        #expect { try SecretFile.read(fifo) } throws: { ($0 as? SecretFileError)?.reason.contains("not a regular file") == true }
        #expect { try SecretFile.read(dir.path) } throws: { ($0 as? SecretFileError)?.reason.contains("not a regular file") == true }
        let missing = dir.appendingPathComponent("missing").path
        #expect { try SecretFile.read(missing) } throws: { ($0 as? SecretFileError)?.reason.contains("cannot open secret file \(missing)") == true }
    }

    @Test("A file larger than the cap is refused; one at the cap reads whole, through a symlink too")
    func sizeCapAndSymlinks() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let big = dir.appendingPathComponent("big").path
        #expect(FileManager.default.createFile(atPath: big, contents: Data(count: SecretFile.maximumBytes + 1), attributes: [.posixPermissions: 0o600]))
        #expect { try SecretFile.read(big) } throws: { ($0 as? SecretFileError)?.reason.contains("more than") == true }
        let exact = dir.appendingPathComponent("exact").path
        #expect(
            FileManager.default.createFile(atPath: exact, contents: Data(repeating: 7, count: SecretFile.maximumBytes), attributes: [.posixPermissions: 0o600]))
        let link = dir.appendingPathComponent("link").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: exact)
        let bytes = try SecretFile.read(link)
        #expect(bytes.count == SecretFile.maximumBytes && bytes.allSatisfy { $0 == 7 })
    }
}
