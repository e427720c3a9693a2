import ArgumentParser
import FairPlay
import Foundation
import KSMService
import Licensing
import RedisStore
import Wire

/// `ksm admin put-rotation`, `rotations`, `remove-rotation` and `derive-key`: the rotation
/// schedule workers prefetch from, and the key-seed derivation a packager must match.
extension AdminCommand {
    struct PutRotation: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "put-rotation",
            abstract: "Create or replace the rotation schedule of a live stream: the next key and the boundary when it takes over.")
        @OptionGroup var connection: Connection
        @Option(help: "Tenant ID.") var tenant: String
        @Option(help: "Asset ID viewers play now, as the SPC carries it.") var asset: String
        @Option(help: "Key period playing now (optional).") var period: String?
        @Option(help: "Asset ID of the next period's key. Default: --asset (same asset, next key period).") var nextAsset: String?
        @Option(help: "Next key period (optional).") var nextPeriod: String?
        @Option(help: "Boundary: ms since 1970, or relative: +90s, +15m, +2h.") var boundary: String
        @Option(help: "Keys each viewer asks for at the boundary (e.g. 2 for audio and video).") var keys = 1

        func run() async throws {
            let now = LicenseProcessor.currentTimeMilliseconds()
            guard let at = RotationSchedule.parseBoundary(boundary, nowMilliseconds: now) else {
                throw ValidationError("--boundary takes ms since 1970 or +N{s,m,h}, got \(boundary)")
            }
            guard (1...64).contains(keys) else { throw ValidationError("--keys must be in 1...64") }
            let schedule = RotationSchedule(
                tenant: try AdminCommand.identifier(tenant, "tenant"), assetID: Array(asset.utf8),
                currentPeriod: try period.map { try AdminCommand.identifier($0, "period") },
                nextAssetID: nextAsset.map { Array($0.utf8) }, nextPeriod: try nextPeriod.map { try AdminCommand.identifier($0, "next period") },
                boundaryMilliseconds: at, keysPerViewer: keys)
            try await connection.store().putRotation(schedule)
            print("rotation of \(asset): next \(nextAsset ?? asset)\(nextPeriod.map { " period \($0)" } ?? "") at \(at) (in \((at - now) / 1000) s)")
        }
    }

    struct Rotations: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rotations", abstract: "List rotation schedules (JSON), soonest boundary first.")
        @OptionGroup var connection: Connection
        @Option(help: "Only this tenant's schedules.") var tenant: String?

        func run() async throws {
            let now = LicenseProcessor.currentTimeMilliseconds()
            let list = try await connection.store().rotations(tenant: try tenant.map { try AdminCommand.identifier($0, "tenant") })
            let rows: [JSONValue] = list.map { s in
                var row: [String: JSONValue] = [
                    "tenant": .string(s.tenant.value), "asset": .string(ByteKey.displayText(s.assetID)),
                    "next-asset": .string(ByteKey.displayText(s.nextAssetID)), "boundary": .integer(s.boundaryMilliseconds),
                    "seconds-to-boundary": .integer((s.boundaryMilliseconds - now) / 1000), "keys": .integer(Int64(s.keysPerViewer)),
                ]
                if let p = s.currentPeriod { row["period"] = .string(p.value) }
                if let p = s.nextPeriod { row["next-period"] = .string(p.value) }
                return .object(row)
            }
            CommandSupport.printJSON(.object(["rotations": .array(rows)]))
        }
    }

    struct RemoveRotation: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove-rotation", abstract: "Remove a stream's rotation schedule.")
        @OptionGroup var connection: Connection
        @Option(help: "Tenant ID.") var tenant: String
        @Option(help: "Asset ID.") var asset: String

        func run() async throws {
            try await connection.store().removeRotation(tenant: try AdminCommand.identifier(tenant, "tenant"), assetID: Array(asset.utf8))
            print("rotation of \(asset) removed")
        }
    }

    struct DeriveKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "derive-key",
            abstract:
                "Print the content key and IV a key seed yields for an asset ID (docs/key-seeds.md), as a packager computes them. Prints key material: use on the packager's host only."
        )
        @Option(help: "Key seed file (32 bytes, hex or raw, mode 600).") var keySeed: String
        @Option(help: "Asset ID, as the SPC carries it.") var asset: String
        @Option(help: "Key period (optional).") var period: String?

        func run() async throws {
            var seed = try KeyFile.readKeySeed(keySeed)
            defer { FairPlayCrypto.cleanse(&seed) }
            let derived = try ContentKeyDerivation.derive(seed: seed, assetID: Array(asset.utf8), keyPeriod: period)
            print("key \(derived.key.hexString)\niv \(derived.iv.hexString)")
        }
    }
}
