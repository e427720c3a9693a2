import FairPlay
import FairPlayDevice
import Foundation
import KSMService

/// SPC-to-CKC throughput on one thread against the floor it cannot beat: the RSA-OAEP private decrypt
/// of the same SPCs with the same keys, measured in the same run, interleaved to share machine noise.
package struct FairPlayBenchmark: Sendable {
    package struct Result: Codable, Sendable {
        package var spcVersion: Int
        package var ckcPerSecond: Double
        package var rsaDecryptsPerSecond: Double
        /// ckcPerSecond / rsaDecryptsPerSecond: 1.0 would mean everything but RSA is free.
        package var ratio: Double
        package var microsecondsPerCKC: Double
        package var microsecondsPerRSADecrypt: Double

        enum CodingKeys: String, CodingKey {
            case spcVersion = "spc_version"
            case ckcPerSecond = "ckc_per_second"
            case rsaDecryptsPerSecond = "rsa_decrypts_per_second"
            case ratio
            case microsecondsPerCKC = "us_per_ckc"
            case microsecondsPerRSADecrypt = "us_per_rsa_decrypt"
        }
    }

    package var server: KeyServerModule
    package var device: SimulatedDevice
    /// Total measuring time per SPC version, split into interleaved rounds.
    package var seconds: Double
    package var rounds: Int

    package init(server: KeyServerModule, device: SimulatedDevice, seconds: Double = 4, rounds: Int = 8) {
        self.server = server
        self.device = device
        self.seconds = seconds
        self.rounds = rounds
    }

    /// The SPCs every row measures: a playback state and one returned tag.
    func spcOptions(version: UInt32) -> SPCOptions {
        var options = SPCOptions()
        options.spcVersion = version
        options.playback = MediaPlaybackInfo(creationDate: 1_790_000_000, state: .readyToPlay, sessionID: 1)
        options.returnRequest = [.transactionID]
        return options
    }

    package func run(version: UInt32) throws -> Result {
        let options = spcOptions(version: version)
        let spcs = try (0..<64).map { _ in try device.makeSPC(options).spc }
        let containers = try spcs.map { try SPCContainer.parse($0[...]) }
        guard let credential = server.credentials.credential(forCertificateHash: containers[0].certificateHash),
            let key = credential.privateKey(forSPCVersion: version)
        else { throw FairPlayError(.invalidCertificate, "benchmark SPCs are not for the server's credential") }
        let content = CKCContent(
            contentKey: [UInt8](repeating: 0x3b, count: 16), contentIV: [UInt8](repeating: 0x42, count: 16), keyDuration: .lease(600), hdcp: .type0,
            requiredSecurityLevel: .baseline)

        // Warm both paths (context pools, page faults) before timing.
        for i in 0..<32 {
            _ = try server.makeCKC(for: try server.open(spcs[i % spcs.count]), content)
            _ = try key.decryptOAEP(containers[i % containers.count].wrappedKey, digest: containers[0].oaepDigest)
        }
        let slice = seconds / Double(rounds * 2)
        var ckcCount = 0
        var ckcTime = 0.0
        var rsaCount = 0
        var rsaTime = 0.0
        for _ in 0..<rounds {
            var start = ContinuousClock.now
            var n = 0
            repeat {
                for _ in 0..<16 {
                    _ = try server.makeCKC(for: try server.open(spcs[n % spcs.count]), content)
                    n += 1
                }
            } while (ContinuousClock.now - start).seconds < slice
            ckcTime += (ContinuousClock.now - start).seconds
            ckcCount += n

            start = ContinuousClock.now
            n = 0
            repeat {
                for _ in 0..<16 {
                    _ = try key.decryptOAEP(containers[n % containers.count].wrappedKey, digest: containers[0].oaepDigest)
                    n += 1
                }
            } while (ContinuousClock.now - start).seconds < slice
            rsaTime += (ContinuousClock.now - start).seconds
            rsaCount += n
        }
        return Self.result(version: version, ckcs: ckcCount, ckcTime: ckcTime, decrypts: rsaCount, rsaTime: rsaTime)
    }

    static func result(version: UInt32, ckcs ckcCount: Int, ckcTime: Double, decrypts rsaCount: Int, rsaTime: Double) -> Result {
        let ckcRate = Double(ckcCount) / ckcTime
        let rsaRate = Double(rsaCount) / rsaTime
        return Result(
            spcVersion: Int(version), ckcPerSecond: ckcRate.rounded(), rsaDecryptsPerSecond: rsaRate.rounded(),
            ratio: (ckcRate / rsaRate * 1000).rounded() / 1000,
            microsecondsPerCKC: (1e7 / ckcRate).rounded() / 10, microsecondsPerRSADecrypt: (1e7 / rsaRate).rounded() / 10)
    }
}

extension FairPlayBenchmark {
    /// The benchmark over the test credentials in `fixtures`, with a simulated device that trusts them.
    package init(fixtures: String, seconds: Double) throws {
        let test = try TestCredentials(directory: fixtures)
        self.init(server: KeyServerModule(credentials: try CredentialStore(test.credentials)), device: SimulatedDevice(trust: test.trust), seconds: seconds)
    }
}
