/// The FPS protocol versions this server supports, and the guide's negotiation rules (tables 2-8, 2-9).
public struct ProtocolVersionPolicy: Hashable, Sendable {
    public var supported: [UInt32]

    /// Default: version 1, the only version the guide defines.
    public init(supported: [UInt32] = [1]) { self.supported = supported }

    /// Accepts the SPC only if its used version is the newest both sides support.
    ///
    /// - Throws: `versionError` when the device uses a version it does not list, when there is no common
    ///   version ("reject the SPC"), or when it uses an older version than the newest common one (a
    ///   downgrade: "an app may have tried to exploit the server").
    public func check(used: UInt32?, deviceSupported: [UInt32]) throws(FairPlayError) {
        // An SPC without the version blocks comes from a client that only knows version 1.
        let used = used ?? 1
        let device = deviceSupported.isEmpty ? [used] : deviceSupported
        guard device.contains(used) else {
            throw FairPlayError(.versionError, "device uses protocol version \(used) but lists only \(device)", tag: .protocolVersionUsed)
        }
        let common = device.filter { supported.contains($0) }
        guard let newest = common.max() else {
            throw FairPlayError(.versionError, "no common protocol version: server supports \(supported), device \(device)", tag: .protocolVersionsSupported)
        }
        guard used == newest else {
            throw FairPlayError(.versionError, "protocol downgrade: device uses version \(used) but both sides support \(newest)", tag: .protocolVersionUsed)
        }
    }
}
