/// One live lease slot of an account, as the store reports it: who, since when, until when.
public struct ActiveStream: Hashable, Sendable {
    /// The device's HU.
    public var deviceID: [UInt8]
    /// The playback session (media playback state TLLV).
    public var sessionID: UInt64
    /// When the slot was first taken (epoch ms): "oldest" for end-oldest.
    public var startedAt: Int64
    /// When the lease runs out (epoch ms); a slot at or past it is free.
    public var expiresAt: Int64
    /// True when a newer stream ended this one (end-oldest): its next renewal is refused.
    public var ended: Bool

    public init(deviceID: [UInt8], sessionID: UInt64, startedAt: Int64, expiresAt: Int64, ended: Bool = false) {
        self.deviceID = deviceID
        self.sessionID = sessionID
        self.startedAt = startedAt
        self.expiresAt = expiresAt
        self.ended = ended
    }

    func isSession(device: [UInt8], session: UInt64) -> Bool { deviceID == device && sessionID == session }
}
