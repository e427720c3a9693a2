/// One live lease slot of an account, as the store reports it: who, since when, until when.
package struct ActiveStream: Hashable, Sendable {
    /// The device's HU.
    package var deviceID: [UInt8]
    /// The playback session (media playback state TLLV).
    package var sessionID: UInt64
    /// When the slot was first taken (epoch ms): "oldest" for end-oldest.
    package var startedAt: Int64
    /// When the lease runs out (epoch ms); a slot at or past it is free.
    package var expiresAt: Int64
    /// True when a newer stream ended this one (end-oldest): its next renewal is refused.
    package var ended: Bool

    package init(deviceID: [UInt8], sessionID: UInt64, startedAt: Int64, expiresAt: Int64, ended: Bool = false) {
        self.deviceID = deviceID
        self.sessionID = sessionID
        self.startedAt = startedAt
        self.expiresAt = expiresAt
        self.ended = ended
    }

    func isSession(device: [UInt8], session: UInt64) -> Bool { deviceID == device && sessionID == session }
}
