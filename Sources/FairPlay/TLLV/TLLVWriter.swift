/// Builds a payload of TLLV blocks with random padding, as the guide's table 2-2 requires.
///
/// Randomness is drawn from OpenSSL in chunks, not per block, to keep system work off the hot path.
package struct TLLVWriter {
    package private(set) var bytes: [UInt8] = []
    private var randomPool: [UInt8] = []
    private var randomIndex = 0

    package init(capacity: Int = 512) { bytes.reserveCapacity(capacity) }

    /// The encoded size of a block with a value of `valueLength` bytes and `extraPaddingBlocks` extra blocks.
    package static func blockSize(valueLength: Int, extraPaddingBlocks: Int = 0) -> Int {
        16 + (valueLength + 15) / 16 * 16 + 16 * extraPaddingBlocks
    }

    /// Appends one block. Padding fills the value to a multiple of 16, plus `extraPaddingBlocks` x 16
    /// random bytes (the guide allows random extension); it is never all 0x00 or all 0xFF.
    package mutating func append(_ tag: TLLVTag, _ value: some Collection<UInt8>, extraPaddingBlocks: Int = 0) {
        let valueLength = value.count
        let paddedLength = (valueLength + 15) / 16 * 16 + 16 * max(0, extraPaddingBlocks)
        bytes.appendBigEndian(tag.rawValue)
        bytes.appendBigEndian(UInt32(paddedLength))
        bytes.appendBigEndian(UInt32(valueLength))
        bytes.append(contentsOf: value)
        appendPadding(paddedLength - valueLength)
    }

    /// Appends an already encoded block unchanged (a block returned at the SPC's request).
    package mutating func appendRaw(_ block: some Collection<UInt8>) {
        bytes.append(contentsOf: block)
    }

    /// `count` random bytes from the writer's pool.
    package mutating func random(_ count: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        for _ in 0..<count { out.append(nextRandomByte()) }
        return out
    }

    private mutating func appendPadding(_ count: Int) {
        guard count > 0 else { return }
        let start = bytes.count
        for _ in 0..<count { bytes.append(nextRandomByte()) }
        let padding = bytes[start...]
        // Table 2-2: "The padding field must contain random values, not all 0x00 or 0xFF bytes."
        if padding.allSatisfy({ $0 == 0x00 }) || padding.allSatisfy({ $0 == 0xFF }) {
            bytes[start] = bytes[start] == 0x00 ? 0x5A : 0xA5
        }
    }

    private mutating func nextRandomByte() -> UInt8 {
        if randomIndex == randomPool.count {
            randomPool = FairPlayCrypto.randomBytes(256)
            randomIndex = 0
        }
        defer { randomIndex += 1 }
        return randomPool[randomIndex]
    }
}
