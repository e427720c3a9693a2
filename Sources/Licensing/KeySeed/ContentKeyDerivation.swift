import FairPlay

/// Content keys derived from a per-tenant key seed, as docs/key-seeds.md specifies, so a packager
/// and every worker compute the same key and IV for a key ID without storing a key per period.
///
/// Version 1, exactly (all lengths big-endian, no text normalisation):
/// ```
/// M = "fpsksm-keyseed-v1" (17 ASCII bytes) || 0x00
///     || uint16(len(A)) || A      A = asset ID bytes as the SPC carries them (1...65535)
///     || uint16(len(P)) || P      P = key period, UTF-8; empty (length 0) when none
/// T = HMAC-SHA256(key: seed, message: M)       seed = 32 bytes
/// content key = T[0..<16], content IV = T[16..<32]
/// ```
/// Like PlayReady key seeds, the seed never leaves the key server and the packager; unlike
/// PlayReady's SHA-256/XOR construction, an HMAC is a standard PRF any language has, so a packager
/// needs no custom code. The length prefixes keep (asset, period) pairs from colliding.
package enum ContentKeyDerivation {
    /// The seed length, in bytes.
    package static let seedLength = 32
    /// The domain-separation label that starts every message (version 1).
    package static let label: [UInt8] = Array("fpsksm-keyseed-v1".utf8) + [0]

    /// Why a key could not be derived. Names no secret.
    package struct InvalidInput: Error, Sendable, Hashable, CustomStringConvertible {
        package var reason: String
        package init(_ reason: String) { self.reason = reason }
        package var description: String { "key seed: \(reason)" }
    }

    /// The derived key and IV.
    package struct DerivedKey: Sendable, Hashable {
        /// The 16-byte content key; the caller should cleanse it after use.
        package var key: [UInt8]
        /// The 16-byte content IV.
        package var iv: [UInt8]
    }

    /// The message `M` for (asset, period).
    /// - Throws: an empty asset ID, or an asset ID or period longer than 65535 bytes.
    package static func message(assetID: [UInt8], keyPeriod: String?) throws(InvalidInput) -> [UInt8] {
        let period = Array((keyPeriod ?? "").utf8)
        guard !assetID.isEmpty, assetID.count <= 0xFFFF else { throw InvalidInput("asset ID is \(assetID.count) bytes, not 1...65535") }
        guard period.count <= 0xFFFF else { throw InvalidInput("key period is longer than 65535 bytes") }
        var m = label
        m.reserveCapacity(label.count + 4 + assetID.count + period.count)
        m += [UInt8(assetID.count >> 8), UInt8(assetID.count & 0xFF)] + assetID
        m += [UInt8(period.count >> 8), UInt8(period.count & 0xFF)] + period
        return m
    }

    /// Derives the key and IV of (asset, period) from `seed`.
    /// - Throws: a seed that is not ``seedLength`` bytes, or a bad asset ID or period (``message(assetID:keyPeriod:)``).
    package static func derive(seed: [UInt8], assetID: [UInt8], keyPeriod: String? = nil) throws(InvalidInput) -> DerivedKey {
        guard seed.count == seedLength else { throw InvalidInput("seed is \(seed.count) bytes, not \(seedLength)") }
        var t = HMACSHA256.mac(key: seed, message: try message(assetID: assetID, keyPeriod: keyPeriod))
        defer { FairPlayCrypto.cleanse(&t) }
        return DerivedKey(key: Array(t[0..<16]), iv: Array(t[16..<32]))
    }
}
