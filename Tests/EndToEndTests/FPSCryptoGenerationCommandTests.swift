import FairPlay
import FairPlayDevice
import Foundation
import Testing

/// `--fpscrypto-generation` and SPC version 3 as `ksm process` users meet them.
@Suite(.serialized) struct FPSCryptoGenerationCommandTests {
    @Test("An unknown --fpscrypto-generation stops start-up; sdk26 and sdk5 are accepted")
    func generationFlag() async throws {
        let credentials = try ProcessCommandTests.testCredentials
        let bad = try await KSMBinary.run(["process", "--credentials", credentials, "--fpscrypto-generation", "sdk7", "-"], input: [])
        #expect(bad.status != 0)
        #expect(String(decoding: bad.stderr, as: UTF8.self).contains("--fpscrypto-generation sdk7"))
        for name in ["sdk26", "sdk5"] {
            let ok = try await KSMBinary.run(["process", "--credentials", credentials, "--fpscrypto-generation", name, "-"], input: Array("[]".utf8))
            #expect(ok.status == 0, "\(name): \(String(decoding: ok.stderr, as: UTF8.self))")
        }
    }

    @Test("An SPC v3 to a server without libfpscrypto answers notImplementedErr (-42612)")
    func version3WithoutLibrary() async throws {
        var o = SPCOptions()
        o.spcVersion = 3
        let (spc, _) = try SimulatedDevice(trust: try ProcessCommandTests.testTrust()).makeSPC(o)
        let op: [String: Any] = [
            "id": "3", "spc": Data(spc).base64EncodedString(),
            "asset-info": [["content-key": String(repeating: "11", count: 16), "content-iv": String(repeating: "22", count: 16), "encryption-scheme": "cbcs"]],
        ]
        let r = try await KSMBinary.run(
            ["process", "--credentials", try ProcessCommandTests.testCredentials, "-"], input: try ProcessCommandTests.request([op]))
        #expect(r.status == 0)
        #expect(ProcessCommandTests.results(r).first?["status"] as? Int == -42612)
    }
}
