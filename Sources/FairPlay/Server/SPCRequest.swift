/// An SPC that opened: its container, typed payload, session values and the credential that opened it.
///
/// A final class of immutable fields: a server passes one request through several stages (policy,
/// lease, CKC), and a struct of this many arrays retained and released every field on every copy.
public final class SPCRequest: Sendable {
    package let container: SPCContainer
    package let payload: SPCPayload
    package let secrets: SessionSecrets
    /// The credential whose certificate the SPC named and whose private key opened it.
    public let credential: ApplicationCredential

    package init(container: SPCContainer, payload: SPCPayload, secrets: SessionSecrets, credential: ApplicationCredential) {
        self.container = container
        self.payload = payload
        self.secrets = secrets
        self.credential = credential
    }

    /// The SPC container version: 1 (1024-bit key), 2 (2048-bit key) or 3 (SDK 26).
    public var spcVersion: UInt32 { container.version }
    /// The asset ID TLLV's bytes, as the client's player passed them (often the `skd://` URI).
    public var assetID: ArraySlice<UInt8> { payload.assetID }
    /// The anonymized device ID; for an AV adapter the adapter's, not to be used for device management.
    public var hu: [UInt8] { secrets.hu }
}
