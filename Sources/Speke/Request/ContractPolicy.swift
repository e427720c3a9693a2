/// What a tenant allows of an encryption contract beyond the CPIX rules, for AWS's error
/// "Requested CPIX encryption contract not supported" ("the encryption contract contradicts DRM
/// security levels constraints"). The constraints are the tenant's, so the service passes them in.
package struct ContractPolicy: Sendable, Hashable {
    /// Whether one key may encrypt audio and video alike (`intendedTrackType="ALL"`, the SHARED
    /// preset). A tenant whose video needs stronger protection than its audio forbids it.
    /// Default: true.
    package var allowsSharedAudioVideoKey: Bool

    package init(allowsSharedAudioVideoKey: Bool = true) {
        self.allowsSharedAudioVideoKey = allowsSharedAudioVideoKey
    }
}
