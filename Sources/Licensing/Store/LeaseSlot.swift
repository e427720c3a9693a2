import Wire

/// One live lease slot of an account.
public struct LeaseSlot: Sendable, Hashable {
    /// The device's hashed unique ID (HU) that holds the slot.
    public var deviceID: [UInt8]
    /// The playback session ID the slot belongs to.
    public var sessionID: UInt64
    /// When the lease ends, in milliseconds since 1970.
    public var expiresAtMilliseconds: Int64

    /// Creates a slot from its parts; ``member(deviceID:sessionID:)`` names it in the store.
    public init(deviceID: [UInt8], sessionID: UInt64, expiresAtMilliseconds: Int64) {
        self.deviceID = deviceID
        self.sessionID = sessionID
        self.expiresAtMilliseconds = expiresAtMilliseconds
    }

    /// The member name of a slot: `<device hex>/<session ID as 16 hex digits>`. Written straight
    /// into one string (every leased job names its slot: the lease script and the viewer count).
    public static func member(deviceID: [UInt8], sessionID: UInt64) -> String {
        String(unsafeUninitializedCapacity: 2 * deviceID.count + 17) { out in
            var o = deviceID.withUnsafeBytes { HexEncoding.write($0, into: out, at: 0) }
            out[o] = UInt8(ascii: "/")
            // The session ID's eight bytes, most significant first: exactly 16 digits, zero-padded.
            o = withUnsafeBytes(of: sessionID.bigEndian) { HexEncoding.write($0, into: out, at: o + 1) }
            return o
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
