import FairPlay
import FairPlayDevice
import KSMService
import Licensing
import Wire

extension FairPlayBenchmark {
    /// The whole `ksm process` path in process: one `create-ckc` request of `spcCount` SPCs, from its
    /// bytes to the response's bytes through ``AppleJSONProcessor``, against raw RSA-OAEP decrypts of
    /// the same SPCs' wrapped keys, the two interleaved over `rounds` in the same run.
    ///
    /// Each operation asks for an `sd` key with a 600 s lease and HDCP type 0, as Apple's sample
    /// request does; the first (untimed) response is checked: every result must carry status 0 and a
    /// CKC, or this throws rather than time answers that are errors.
    package func runProcess(version: UInt32, spcCount: Int = 2000, rounds: Int = 4) throws -> Result {
        let options = spcOptions(version: version)
        let spcs = try (0..<spcCount).map { _ in try device.makeSPC(options).spc }
        let containers = try spcs.map { try SPCContainer.parse($0[...]) }
        guard let credential = server.credentials.credential(forCertificateHash: containers[0].certificateHash),
            let key = credential.privateKey(forSPCVersion: version)
        else { throw FairPlayError(.invalidCertificate, "benchmark SPCs are not for the server's credential") }
        let request = Self.createCKCRequest(spcs)
        let processor = AppleJSONProcessor(server: server)

        // Warm both paths and check the answers once.
        try Self.check(processor.processToJSON(request), count: spcCount)
        for container in containers.prefix(64) { _ = try key.decryptOAEP(container.wrappedKey, digest: container.oaepDigest) }

        var processTime = 0.0
        var rsaTime = 0.0
        for _ in 0..<rounds {
            var start = ContinuousClock.now
            let output = processor.processToJSON(request)
            processTime += (ContinuousClock.now - start).seconds
            precondition(!output.isEmpty)

            start = ContinuousClock.now
            for container in containers { _ = try key.decryptOAEP(container.wrappedKey, digest: container.oaepDigest) }
            rsaTime += (ContinuousClock.now - start).seconds
        }
        return Self.result(version: version, ckcs: spcCount * rounds, ckcTime: processTime, decrypts: spcCount * rounds, rsaTime: rsaTime)
    }

    /// Apple's request shape: `{"fairplay-streaming-request": {"create-ckc": [{"id", "spc", "asset-info"}]}}`.
    static func createCKCRequest(_ spcs: [[UInt8]]) -> [UInt8] {
        var out = Array(#"{"fairplay-streaming-request":{"create-ckc":["#.utf8)
        for (index, spc) in spcs.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out += Array(#"{"id":\#(index + 1),"spc":""#.utf8)
            out += Array(Base64.encode(spc).utf8)
            out += Array(
                #"","asset-info":[{"content-key":"3b3b3b3b3b3b3b3b3b3b3b3b3b3b3b3b","content-iv":"42424242424242424242424242424242","content-type":"sd","hdcp-type":0,"lease-duration":600}]}"#
                    .utf8)
        }
        out += Array("]}}".utf8)
        return out
    }

    struct ProcessCheckFailed: Error, CustomStringConvertible {
        var description: String
    }

    /// Every result of a `create-ckc` response has status 0 and a CKC, and there are `count` of them.
    static func check(_ response: [UInt8], count: Int) throws {
        guard case .object(let root) = try JSONValue(parsing: response),
            case .object(let body)? = root["fairplay-streaming-response"],
            case .array(let results)? = body["create-ckc"]
        else { throw ProcessCheckFailed(description: "the response is not a create-ckc response") }
        guard results.count == count else { throw ProcessCheckFailed(description: "\(results.count) results for \(count) SPCs") }
        for case .object(let result) in results {
            guard result["status"] == .integer(0), case .string(let ckc)? = result["ckc"], !ckc.isEmpty else {
                throw ProcessCheckFailed(
                    description: "a result without a CKC: status \(result["status"].map { "\($0)" } ?? "none"), \(result["reason"].map { "\($0)" } ?? "")")
            }
        }
    }
}
