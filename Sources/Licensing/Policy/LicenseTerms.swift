import FairPlay

/// What the CKC grants when the policy issues a license.
package struct LicenseTerms: Hashable, Sendable {
    /// False for playback state 2 (a duration answer without a valid key, guide table 4-2) and for
    /// sync SPCs (check-in only).
    package var includesContentKey: Bool
    /// The key's lifetime (content key duration TLLV or offline key TLLV, never both).
    package var duration: KeyDurationTerms
    /// The HDCP enforcement TLLV's level (Apple's SDK 26 always sends one).
    package var hdcp: HDCPRequirement
    /// The required security level TLLV's level.
    package var requiredSecurityLevel: SecurityLevel
    /// The lease slot the worker must take, renew or find before sending the CKC.
    package var leaseSlot: LeaseSlotNeed
    /// True when this license starts the account's rental period: the worker records `now` as the
    /// rental start for the account and asset, and passes it back as
    /// ``PolicyInput/rentalStartedAtMilliseconds`` next time.
    package var startsRental: Bool
    /// True when the policy limits devices per account: the worker registers the HU through
    /// ``DeviceLimit/decide(device:registered:limit:)`` before sending the CKC.
    package var registersDevice: Bool

    package init(
        includesContentKey: Bool, duration: KeyDurationTerms, hdcp: HDCPRequirement, requiredSecurityLevel: SecurityLevel, leaseSlot: LeaseSlotNeed = .none,
        startsRental: Bool = false, registersDevice: Bool = false
    ) {
        self.includesContentKey = includesContentKey
        self.duration = duration
        self.hdcp = hdcp
        self.requiredSecurityLevel = requiredSecurityLevel
        self.leaseSlot = leaseSlot
        self.startsRental = startsRental
        self.registersDevice = registersDevice
    }
}
