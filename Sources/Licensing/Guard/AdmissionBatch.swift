/// The answer to ``JobGuardStore/admit(_:nowMilliseconds:rateWindowMilliseconds:)``: one
/// ``Admission`` per request, in order, and the guard settings of every tenant asked about.
public struct AdmissionBatch: Sendable, Hashable {
    package var admissions: [Admission]
    /// Per tenant; a tenant with no stored settings maps to ``GuardSettings/off``.
    package var settings: [StoreIdentifier: GuardSettings]

    package init(admissions: [Admission], settings: [StoreIdentifier: GuardSettings]) {
        self.admissions = admissions
        self.settings = settings
    }
}
