/// A cursor over big-endian bytes. Every read returns nil, without moving, if too few bytes remain.
package struct ByteReader: Sendable {
    package private(set) var bytes: ArraySlice<UInt8>

    package init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }
    package init(_ bytes: [UInt8]) { self.bytes = bytes[...] }

    package var remaining: Int { bytes.count }

    package mutating func readUInt32() -> UInt32? {
        guard bytes.count >= 4 else { return nil }
        let i = bytes.startIndex
        let v = UInt32(bytes[i]) << 24 | UInt32(bytes[i + 1]) << 16 | UInt32(bytes[i + 2]) << 8 | UInt32(bytes[i + 3])
        bytes = bytes.dropFirst(4)
        return v
    }

    package mutating func readUInt64() -> UInt64? {
        guard bytes.count >= 8, let hi = readUInt32(), let lo = readUInt32() else { return nil }
        return UInt64(hi) << 32 | UInt64(lo)
    }

    package mutating func readBytes(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, bytes.count >= count else { return nil }
        let out = bytes.prefix(count)
        bytes = bytes.dropFirst(count)
        return out
    }
}

extension Array where Element == UInt8 {
    /// Appends `value` in network byte order.
    @inlinable
    package mutating func appendBigEndian(_ value: UInt32) {
        append(UInt8(truncatingIfNeeded: value >> 24))
        append(UInt8(truncatingIfNeeded: value >> 16))
        append(UInt8(truncatingIfNeeded: value >> 8))
        append(UInt8(truncatingIfNeeded: value))
    }

    /// Appends `value` in network byte order.
    @inlinable
    package mutating func appendBigEndian(_ value: UInt64) {
        appendBigEndian(UInt32(truncatingIfNeeded: value >> 32))
        appendBigEndian(UInt32(truncatingIfNeeded: value))
    }
}
