/// An SPC that opened: its container, typed payload, session values and the credential that opened it.
///
/// A final class of immutable fields: a server passes one request through several stages (policy,
/// lease, CKC), and a struct of this many arrays retained and released every field on every copy.
public final class SPCRequest: Sendable {
    package let container: SPCContainer
    package let payload: SPCPayload
    package let secrets: SessionSecrets
    public let credential: ApplicationCredential

    package init(container: SPCContainer, payload: SPCPayload, secrets: SessionSecrets, credential: ApplicationCredential) {
        self.container = container
        self.payload = payload
        self.secrets = secrets
        self.credential = credential
    }

    public var spcVersion: UInt32 { container.version }
    public var assetID: ArraySlice<UInt8> { payload.assetID }
    /// The anonymized device ID; for an AV adapter the adapter's, not to be used for device management.
    public var hu: [UInt8] { secrets.hu }
}
