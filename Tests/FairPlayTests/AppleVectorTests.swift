import FairPlay
import FairPlayDevice
import Foundation
import Testing
import Wire

/// Apple's FairPlay Streaming Server SDK 2.0.3 verification vectors (../shared/vectors/apple-sdk-2.0.3).
@Suite struct AppleVectorTests {
    struct Vector: Sendable, CustomStringConvertible {
        let spc: String
        let ckc: String
        let assetID: [UInt8]
        let contentKey: String
        let contentIV: String
        var description: String { spc }
    }

    static let vectors: [Vector] = [
        Vector(
            spc: "FPS/spc1.bin", ckc: "FPS/ckc1.bin", assetID: [UInt8](hexString: "aabbccddeeffaabbccddeeffaabbccddeeff")!,
            contentKey: "3b3b3b3b3b3b3b3b3b3b3b3b3b3b3b3b", contentIV: "d5fbd6b82ed93e4ef98ae40931ee33b7"),
        Vector(
            spc: "FPS/spc2.bin", ckc: "FPS/ckc2.bin", assetID: Array("one".utf8), contentKey: "31313131313131313131313131313131",
            contentIV: "546865517569636b42726f776e466f78"),
        Vector(
            spc: "FPS/spc3.bin", ckc: "FPS/ckc3.bin", assetID: [UInt8](hexString: "aabbccddeeffaabbccddeeffaabbccddeeff")!,
            contentKey: "3b3b3b3b3b3b3b3b3b3b3b3b3b3b3b3b", contentIV: "d5fbd6b82ed93e4ef98ae40931ee33b7"),
        Vector(
            spc: "FPS-Lease/spc1.bin", ckc: "FPS-Lease/ckc1.bin", assetID: Array("one".utf8), contentKey: "31313131313131313131313131313131",
            contentIV: "546865517569636b42726f776e466f78"),
        Vector(
            spc: "FPS-Lease/spc2.bin", ckc: "FPS-Lease/ckc2.bin", assetID: Array("one".utf8), contentKey: "31313131313131313131313131313131",
            contentIV: "546865517569636b42726f776e466f78"),
        Vector(
            spc: "FPS-Lease/spc3.bin", ckc: "FPS-Lease/ckc3.bin", assetID: Array("one".utf8), contentKey: "31313131313131313131313131313131",
            contentIV: "546865517569636b42726f776e466f78"),
    ]

    static func server() throws -> KeyServerModule {
        KeyServerModule(credentials: try CredentialStore([try Fixtures.appleCredential()]))
    }

    static func session(_ request: SPCRequest) -> DeviceSession {
        var requested: [TLLVTag: [UInt8]] = [:]
        for tag in request.payload.returnRequest { requested[tag] = request.payload.tllvs[tag].map { Array($0.raw) } }
        return DeviceSession(
            sessionKey: request.secrets.sessionKey!, hu: request.secrets.hu, r1: request.secrets.r1,
            antiReplaySeed: Array(request.payload.antiReplaySeed), assetID: Array(request.assetID),
            requestedBlocks: requested, capabilities: request.payload.capabilities)
    }

    @Test("Apple's SPC opens, passes the integrity check and names the expected asset", arguments: vectors)
    func appleSPCOpens(_ v: Vector) throws {
        let request = try Self.server().open(try Fixtures.apple(v.spc))
        #expect(request.spcVersion == 1)
        #expect(Array(request.assetID) == v.assetID)
        #expect(request.credential.certificateHash.hexString == "5561980aa51f03aa04bca24556c841a71736c771")
    }

    @Test("A CKC built for Apple's SPC opens on the device side with the expected key and IV", arguments: vectors)
    func ckcForAppleSPCOpens(_ v: Vector) throws {
        let server = try Self.server()
        let request = try server.open(try Fixtures.apple(v.spc))
        var content = CKCContent(contentKey: [UInt8](hexString: v.contentKey)!, contentIV: [UInt8](hexString: v.contentIV)!)
        if request.payload.playback != nil { content.keyDuration = .lease(120) }
        let ckc = try server.makeCKC(for: request, content)
        let opened = try CKCOpener.open(ckc, session: Self.session(request))
        #expect(opened.contentKey.hexString == v.contentKey)
        #expect(opened.contentIV.hexString == v.contentIV)
    }

    @Test("Apple's own CKC opens with the device-side opener", arguments: vectors)
    func appleCKCOpens(_ v: Vector) throws {
        let request = try Self.server().open(try Fixtures.apple(v.spc))
        let opened = try CKCOpener.open(try Fixtures.apple(v.ckc), session: Self.session(request))
        #expect(opened.contentKey.hexString == v.contentKey)
        #expect(opened.contentIV.hexString == v.contentIV)
        if v.spc.hasPrefix("FPS-Lease") {
            #expect(opened.keyDuration == ContentKeyDuration(leaseSeconds: 120, rentalSeconds: 0, keyType: .lease, reserved: 0))
        }
    }

    @Test("Session values recovered from Apple's SPCs match spc_internal_values_v2.txt")
    func internalValuesMatch() throws {
        let text = try String(contentsOf: Fixtures.appleVectors.appendingPathComponent("spc_internal_values_v2.txt"), encoding: .utf8)
        // Each "SPC n" section lists R1 and SK as hex groups under "*** R1" and "*** SK".
        let sections = text.components(separatedBy: "\nSPC ").dropFirst()
        #expect(sections.count == 3)
        for (i, section) in sections.enumerated() {
            func value(_ label: String) -> String {
                let lines = section.components(separatedBy: "\n")
                guard let start = lines.firstIndex(where: { $0.hasPrefix("*** \(label) ") }) else { return "" }
                var hex = ""
                for line in lines[(start + 1)...] {
                    if line.hasPrefix("***") || line.trimmingCharacters(in: .whitespaces).isEmpty { break }
                    hex += line.replacingOccurrences(of: " ", with: "")
                }
                return hex.lowercased()
            }
            // Sections 1 and 3 describe FPS/spc1.bin and FPS/spc3.bin. Section 2 lists an R1 that none of
            // the shipped SPCs holds (FPS/spc2.bin opens, and Apple's ckc2.bin opens with its values), so
            // the sheet's SPC 2 is another capture; it is skipped here and noted in docs/fairplay-core.md.
            if i == 1 { continue }
            let request = try Self.server().open(try Fixtures.apple("FPS/spc\(i + 1).bin"))
            #expect(request.secrets.r1.hexString == value("R1"))
            #expect(request.secrets.sessionKey!.hexString == value("SK"))
            #expect(Array(request.payload.antiReplaySeed).hexString == value("AR"))
            #expect(Array(request.payload.r2).hexString == value("R2"))
        }
    }
}
