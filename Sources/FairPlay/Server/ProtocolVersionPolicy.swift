/// Which FPS protocol versions a device may say it used.
///
/// Apple's SDK 26 checks none: it reads the versions-supported and version-used TLLVs and passes the
/// used version to its library. Every real device lists [1, 2] and uses 1, so the guide's "newest
/// common version" rule would refuse them all; this server follows SDK 26 and never refuses a device
/// for listing a version it does not use. A deployment may narrow the versions it accepts as used.
public struct ProtocolVersionPolicy: Hashable, Sendable {
    /// The versions accepted as used; empty accepts any (SDK 26).
    public var accepted: [UInt32]

    /// Default: any version, as Apple's SDK 26.
    public init(accepted: [UInt32] = []) { self.accepted = accepted }

    /// - Throws: `versionError` when `accepted` is not empty and does not hold the used version.
    public func check(used: UInt32, deviceSupported: [UInt32]) throws(FairPlayError) {
        guard accepted.isEmpty || accepted.contains(used) else {
            throw FairPlayError(
                .versionError, "device uses protocol version \(used); this server accepts \(accepted.map(String.init).joined(separator: ", "))",
                tag: .protocolVersionUsed)
        }
    }
}
