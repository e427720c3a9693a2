/// The engine's answer: issue with ``terms``, or refuse with a ``PolicyRefusal``; either way the
/// rule that decided and a reason a person can read (never key material).
package struct PolicyDecision: Hashable, Sendable, CustomStringConvertible {
    /// Set when the license is refused.
    package var refusal: PolicyRefusal?
    /// Set when the license is issued.
    package var terms: LicenseTerms?
    /// The rule that decided: the refusal's rule, or what shaped the terms ("lease:granted", ...).
    package var rule: String
    /// Why, in words, for the reply's `reason` and `ksm admin explain`.
    package var reason: String

    /// Memberwise; the worker uses it for refusals decided before the engine (an invalid layer).
    package init(refusal: PolicyRefusal?, terms: LicenseTerms?, rule: String, reason: String) {
        self.refusal = refusal
        self.terms = terms
        self.rule = rule
        self.reason = reason
    }

    package static func issue(_ terms: LicenseTerms, rule: String, reason: String) -> PolicyDecision {
        PolicyDecision(refusal: nil, terms: terms, rule: rule, reason: reason)
    }

    package static func refuse(_ refusal: PolicyRefusal, _ reason: String) -> PolicyDecision {
        PolicyDecision(refusal: refusal, terms: nil, rule: refusal.rule, reason: reason)
    }

    package var isIssued: Bool { terms != nil }

    /// The reply status: 0 (noErr) when issued, else the refusal's code.
    package var status: Int32 { refusal?.status ?? 0 }

    /// The status name: "noErr" when issued.
    package var statusName: String { refusal?.statusName ?? "noErr" }

    package var description: String { "\(statusName) [\(rule)] \(reason)" }
}
