/// Everything ``PolicyEngine/evaluate(_:)`` decides on. No I/O: the worker gathers these first.
package struct PolicyInput: Hashable, Sendable {
    /// The resolved policy (layers over Apple's rules).
    package var policy: EffectivePolicy
    /// What the SPC says about the client.
    package var client: ClientFacts
    /// The clock, epoch milliseconds. Injected so that tests control time.
    package var nowMilliseconds: Int64
    /// What the job's entitlement token amounted to.
    package var entitlement: EntitlementState
    /// True when the job asks for a persistable key (a download), from the platform's request.
    package var requestsPersistence: Bool
    /// True when the job is a check-in (Apple's JSON `check-in`): answered from the sync TLLV, no key.
    package var checkIn: Bool
    /// When the account's rental of this asset started (its first license), from the store; nil when
    /// this is the first license (the decision then says ``LicenseTerms/startsRental``).
    package var rentalStartedAtMilliseconds: Int64?

    package init(
        policy: EffectivePolicy, client: ClientFacts, nowMilliseconds: Int64, entitlement: EntitlementState = .absent, requestsPersistence: Bool = false,
        checkIn: Bool = false, rentalStartedAtMilliseconds: Int64? = nil
    ) {
        self.checkIn = checkIn
        self.policy = policy
        self.client = client
        self.nowMilliseconds = nowMilliseconds
        self.entitlement = entitlement
        self.requestsPersistence = requestsPersistence
        self.rentalStartedAtMilliseconds = rentalStartedAtMilliseconds
    }
}
