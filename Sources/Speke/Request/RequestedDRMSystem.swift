/// One `cpix:DRMSystem` of a request: the signaling one DRM system needs for one key.
package struct RequestedDRMSystem: Sendable, Hashable {
    package var systemID: KID
    /// `DRMSystem@systemId` as the request wrote it (answered unchanged; error messages name it).
    package var systemIDText: String
    package var kid: KID
    package var kidText: String
    /// Which children the request carried, whatever their content (an empty element is a request).
    package var requested: Set<SignalingElement>
    /// The playlists of the request's `HLSSignalingData` children, in document order.
    package var hlsPlaylists: [HLSPlaylist]
    /// The request's other attributes (`id`, `name`, `updateVersion`), answered unchanged.
    package var otherAttributes: [XMLAttribute]

    package init(
        systemID: KID, systemIDText: String, kid: KID, kidText: String, requested: Set<SignalingElement>, hlsPlaylists: [HLSPlaylist],
        otherAttributes: [XMLAttribute] = []
    ) {
        self.systemID = systemID
        self.systemIDText = systemIDText
        self.kid = kid
        self.kidText = kidText
        self.requested = requested
        self.hlsPlaylists = hlsPlaylists
        self.otherAttributes = otherAttributes
    }

    /// True for Apple FairPlay Streaming.
    package var isFairPlay: Bool { systemID == DRMSystemID.fairPlay }
}
