/// One live lease slot of an account.
public struct LeaseSlot: Sendable, Hashable {
    public var deviceID: [UInt8]
    public var sessionID: UInt64
    public var expiresAtMilliseconds: Int64

    public init(deviceID: [UInt8], sessionID: UInt64, expiresAtMilliseconds: Int64) {
        self.deviceID = deviceID
        self.sessionID = sessionID
        self.expiresAtMilliseconds = expiresAtMilliseconds
    }

    /// The member name of a slot: `<device hex>/<session ID as 16 hex digits>`. Written straight
    /// into one string (every leased job names its slot twice: the lease script and the viewer count).
    public static func member(deviceID: [UInt8], sessionID: UInt64) -> String {
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: 2 * deviceID.count + 17) { out in
            digits.withUTF8Buffer { digits in
                var o = 0
                for byte in deviceID {
                    out[o] = digits[Int(byte >> 4)]
                    out[o + 1] = digits[Int(byte & 0x0F)]
                    o += 2
                }
                out[o] = UInt8(ascii: "/")
                for shift in stride(from: 60, through: 0, by: -4) {
                    o += 1
                    out[o] = digits[Int(sessionID >> UInt64(shift) & 0x0F)]
                }
                return o + 1
            }
        }
    }

    /// Parses a member name and its expiry; nil if malformed.
    public init?(member: some StringProtocol, expiresAtMilliseconds: Int64) {
        let parts = member.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = HexEncoding.decode(parts[0]),
            let session = UInt64(parts[1], radix: 16)
        else { return nil }
        self.init(deviceID: device, sessionID: session, expiresAtMilliseconds: expiresAtMilliseconds)
    }
}
