import Licensing

/// One key a packager asks for: a `cpix:ContentKey` of a SPEKE request, with the content ID,
/// key period and intended track type that go with it.
package struct PackagerKeyRequest: Sendable, Hashable {
    /// The tenant named in the request's route.
    package let tenant: StoreIdentifier
    /// `CPIX@contentId`.
    package let contentID: String
    /// The key's period (`KeyPeriodFilter`); nil for a key without periods (VOD).
    package let keyPeriod: PackagerKeyPeriod?
    /// `ContentKey@kid`, 16 bytes.
    package let keyID: [UInt8]
    /// `ContentKeyUsageRule@intendedTrackType`; nil when the request names none.
    package let trackType: IntendedTrackType?
    /// `ContentKey@explicitIV` when the request sets one (16 bytes): the key is issued with it.
    package let explicitIV: [UInt8]?

    /// The longest content ID accepted, in UTF-8 bytes.
    package static let maximumContentIDLength = 512

    /// - Throws: `.invalidRequest` for an empty or over-long content ID, a KID or IV that is not 16 bytes.
    package init(
        tenant: StoreIdentifier, contentID: String, keyPeriod: PackagerKeyPeriod?, keyID: [UInt8], trackType: IntendedTrackType?,
        explicitIV: [UInt8]? = nil
    ) throws(PackagerKeyIssuerError) {
        guard !contentID.utf8.isEmpty, contentID.utf8.count <= Self.maximumContentIDLength else {
            throw PackagerKeyIssuerError(.invalidRequest, "content ID is not 1...\(Self.maximumContentIDLength) bytes")
        }
        guard keyID.count == 16 else { throw PackagerKeyIssuerError(.invalidRequest, "key ID is \(keyID.count) bytes, not 16") }
        if let explicitIV, explicitIV.count != 16 {
            throw PackagerKeyIssuerError(.invalidRequest, "explicit IV is \(explicitIV.count) bytes, not 16")
        }
        self.tenant = tenant
        self.contentID = contentID
        self.keyPeriod = keyPeriod
        self.keyID = keyID
        self.trackType = trackType
        self.explicitIV = explicitIV
    }

    /// The `skd://` URI of this key (``PackagerAssetID``).
    package var uri: String { PackagerAssetID.uri(contentID: contentID, periodName: keyPeriod?.name, keyID: keyID) }

    /// The asset ID the SPC will carry: the URI's bytes.
    package var assetID: [UInt8] { Array(uri.utf8) }
}
