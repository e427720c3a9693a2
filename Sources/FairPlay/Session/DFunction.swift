/// The legacy D function of FairPlay Streaming SDK 4 and earlier: DASk = AES-128-ECB(ASk, H(R2)).
///
/// H is stated in ../shared/vectors/dfunction-vectors.md: a 64-byte block holding R2 and a 0x80
/// terminator, two words folded from its fourteen big-endian words, sixteen rounds of a Collatz-like
/// step on each, stored little-endian at offsets 56 and 60, then the first 16 bytes of SHA-1.
package enum DFunction {
    /// The 16-byte hash of R2 (1 to 55 bytes).
    package static func hash(r2: some Collection<UInt8>) throws(FairPlayError) -> [UInt8] {
        guard (1...55).contains(r2.count) else { throw .param("R2 of \(r2.count) bytes is outside 1...55") }
        var block = [UInt8](repeating: 0, count: 64)
        var i = 0
        for byte in r2 {
            block[i] = byte
            i += 1
        }
        block[i] = 0x80
        var words = [UInt32](repeating: 0, count: 14)
        for w in 0..<14 {
            words[w] = UInt32(block[4 * w]) << 24 | UInt32(block[4 * w + 1]) << 16 | UInt32(block[4 * w + 2]) << 8 | UInt32(block[4 * w + 3])
        }
        var m0: UInt32 = 0
        var m1: UInt32 = 0
        for w in 0..<7 { m0 &+= words[w] }
        for w in 7..<14 { m1 &+= words[w] }
        m0 = scramble(m0)
        m1 = scramble(m1)
        for b in 0..<4 {
            block[56 + b] = UInt8(truncatingIfNeeded: m0 >> (8 * UInt32(b)))
            block[60 + b] = UInt8(truncatingIfNeeded: m1 >> (8 * UInt32(b)))
        }
        return Array(FairPlayCrypto.sha1(block).prefix(16))
    }

    /// DASk for one SPC from its R2 and the Application Secret Key.
    package static func derivedApplicationSecretKey(r2: some Collection<UInt8>, ask: some Collection<UInt8>) throws(FairPlayError) -> [UInt8] {
        guard ask.count == 16 else { throw .param("ASk must be 16 bytes, got \(ask.count)") }
        return try FairPlayCrypto.aes128ECBEncrypt(key: ask, try hash(r2: r2))
    }

    private static func scramble(_ start: UInt32) -> UInt32 {
        var v = start
        for _ in 0..<16 {
            if v & 1 == 1 {
                v >>= 1
            } else {
                v = (3 &* v &+ 1) % 813_416_437
            }
        }
        return v
    }
}
