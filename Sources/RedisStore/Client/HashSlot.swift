/// Redis Cluster's key-to-slot function: CRC16-XMODEM of the key (or of its hash tag) mod 16384.
///
/// The hash tag is the part between the first `{` and the next `}` when it is not empty; keys
/// sharing a tag share a slot, which is what lets a script or a transaction touch several keys.
package enum HashSlot {
    /// Slots in every Redis Cluster.
    package static let count = 16384

    /// The slot of `key`.
    package static func of(_ key: some Collection<UInt8>) -> Int {
        Int(crc16(hashedPart(of: key)) & 0x3FFF)
    }

    /// The slot of a UTF-8 key (tests and tools).
    package static func of(_ key: String) -> Int {
        of(Array(key.utf8))
    }

    /// CRC16-XMODEM (polynomial 0x1021, initial value 0), as Redis's `crc16.c`.
    package static func crc16(_ bytes: some Collection<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc = (crc << 8) ^ table[Int((crc >> 8) ^ UInt16(byte)) & 0xFF]
        }
        return crc
    }

    /// The bytes Redis hashes: the tag between the first `{` and the following `}` if that is not
    /// empty, else the whole key.
    private static func hashedPart<Key: Collection<UInt8>>(of key: Key) -> Key.SubSequence {
        if let open = key.firstIndex(of: UInt8(ascii: "{")) {
            let afterOpen = key.index(after: open)
            if let close = key[afterOpen...].firstIndex(of: UInt8(ascii: "}")), close != afterOpen {
                return key[afterOpen..<close]
            }
        }
        return key[...]
    }

    private static let table: [UInt16] = (0..<256).map { index in
        var crc = UInt16(index) << 8
        for _ in 0..<8 {
            crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1
        }
        return crc
    }
}
