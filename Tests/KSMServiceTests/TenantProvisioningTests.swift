import FairPlay
import Foundation
import Licensing
import Testing
import Wire

@testable import KSMService

/// `ksm admin put-tenant` and the provisioning Job build tenant records through
/// ``TenantProvisioning``: certificate hashes from files and hex, secrets wrapped under the tenant's
/// KEK, every bad input refused with the input named.
@Suite struct TenantProvisioningTests {
    let directory: URL
    let kek = [UInt8](repeating: 0x4B, count: 16)
    let seed = (0..<32).map { UInt8($0) }
    let secret = [UInt8](repeating: 0x53, count: 40)

    init() throws {
        directory = try SecretFileTests.copy(mode: 0o600)
        try write("kek.hex", HexEncoding.encode(kek))
        try write("seed.hex", HexEncoding.encode(seed))
        try write("token.hex", HexEncoding.encode(secret))
        try write("short.hex", HexEncoding.encode([UInt8](repeating: 1, count: 24)))
    }

    func write(_ name: String, _ text: String, mode: Int = 0o600) throws {
        let url = directory.appendingPathComponent(name)
        FileManager.default.createFile(atPath: url.path, contents: Data((text + "\n").utf8), attributes: [.posixPermissions: mode])
    }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    func provisioning() -> TenantProvisioning {
        var p = TenantProvisioning(tenant: "tv1", keyEncryptionKeyID: "kek-1")
        p.keyEncryptionKeyFile = "kek-1=" + path("kek.hex")
        return p
    }

    @Test(
        "hashes come from the credentials file and from hex; the seed and token secrets are stored wrapped under the tenant's KEK and unwrap to the files' bytes"
    )
    func recordWithSecrets() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var p = provisioning()
        p.credentialsFiles = [path("certificates.json")]
        p.certificateHashes = [String(repeating: "ab", count: 20)]
        p.maxConcurrentStreams = 4
        p.leaseDurationSeconds = 90
        p.keySeedFile = path("seed.hex")
        p.tokenSecrets = ["k1=" + path("token.hex")]
        let record = try p.record()
        let fileHash = try CredentialsFile.load(path: path("certificates.json"))[0].certificateHash
        #expect(record.id.value == "tv1" && record.keyEncryptionKeyID.value == "kek-1")
        #expect(record.certificateHashes == [[UInt8](repeating: 0xAB, count: 20), fileHash])
        #expect(record.maxConcurrentStreams == 4 && record.leaseDurationSeconds == 90)
        let keyring = KeyEncryptionKeyring()
        var key = kek
        try keyring.add(id: try StoreIdentifier("kek-1"), key: &key)
        let wrappedSeed = try #require(record.keySeed)
        #expect(wrappedSeed != seed)
        #expect(try keyring.unwrap(secret: wrappedSeed, with: try StoreIdentifier("kek-1")) == seed)
        let wrappedToken = try #require(record.entitlementSecrets[try StoreIdentifier("k1")])
        #expect(try keyring.unwrap(secret: wrappedToken, with: try StoreIdentifier("kek-1")) == secret)
    }

    @Test(
        "each bad input is refused with a message naming it",
        arguments: [
            ("hash", "is not 20 bytes of hex"),
            ("tenant", "tenant:"),
            ("seed without KEK", "a key seed needs the tenant's KEK as kek-1=PATH"),
            ("KEK of another ID", "names kek-2, but the tenant's KEK is kek-1"),
            ("short token secret", "token secret k1 is not 32 to 1024 bytes"),
            ("readable secret", "chmod 600"),
            ("credentials", "credentials: cannot read /"),
        ])
    func refusals(input: String, message: String) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var p = provisioning()
        switch input {
        case "hash": p.certificateHashes = ["abcd"]
        case "tenant": p.tenant = "a b"
        case "seed without KEK":
            p.keyEncryptionKeyFile = nil
            p.keySeedFile = path("seed.hex")
        case "KEK of another ID":
            p.keyEncryptionKeyFile = "kek-2=" + path("kek.hex")
            p.tokenSecrets = ["k1=" + path("token.hex")]
        case "short token secret": p.tokenSecrets = ["k1=" + path("short.hex")]
        case "readable secret":
            try write("open.hex", HexEncoding.encode(seed), mode: 0o644)
            p.keySeedFile = path("open.hex")
        default: p.credentialsFiles = [path("missing.json")]
        }
        do {
            _ = try p.record()
            Issue.record("\(input) was accepted")
        } catch {
            #expect(error.description.contains(message), "\(error)")
            #expect(!error.description.contains("credentials: credentials:"), "\(error)")
        }
    }
}
