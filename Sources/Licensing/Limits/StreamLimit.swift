/// Concurrent streams per account through lease slots (guide, "Secure Lease"): a slot per device
/// and playback session, freed when its lease runs out. Pure: the slots come from the store; the
/// worker writes back what the decision says.
package enum StreamLimit {
    /// Decides the slot for one request.
    ///
    /// - A slot at or past its `expiresAt` is free and counts for nothing.
    /// - `acquire` for a session that already holds a live slot renews it (a redelivered job or a
    ///   player asking twice must not take two slots).
    /// - `renew` for a session whose slot lapsed is a new acquisition under the limit.
    /// - A session ended by a newer stream (end-oldest) is refused on its next renewal or hold.
    package static func decide(
        device: [UInt8], session: UInt64, need: LeaseSlotNeed, active: [ActiveStream], limit: PolicyLimit, whenFull: WhenFull, nowMilliseconds now: Int64
    ) -> StreamDecision {
        let live = active.filter { $0.expiresAt > now }
        let mine = live.first { $0.isSession(device: device, session: session) }
        if let mine, mine.ended, need != .none {
            return .refused(.streamEnded, "this stream was ended by a newer one on the account")
        }
        switch need {
        case .none:
            return .notNeeded
        case .hold:
            guard let mine else {
                return .refused(.leaseRenewalNotAllowed, "the session holds no live lease and the policy does not renew leases")
            }
            return .hold(expiresAt: mine.expiresAt)
        case .acquire(let seconds), .renew(let seconds):
            let expiry = now + Int64(seconds) * 1000
            if mine != nil { return .renew(expiresAt: expiry) }
            let others = live.filter { !$0.ended }
            guard limit.isFull(with: others.count) else { return .admit(expiresAt: expiry, ending: nil) }
            switch whenFull {
            case .refuseNew:
                return .refused(.tooManyStreams, "the account holds \(others.count) of \(limit) streams")
            case .endOldest:
                // Ties on the start time fall to the earlier expiry, then the device and session, so
                // every worker picks the same victim.
                let oldest = others.min(by: Self.startsEarlier)
                return .admit(expiresAt: expiry, ending: oldest)
            }
        }
    }

    static func startsEarlier(_ a: ActiveStream, _ b: ActiveStream) -> Bool {
        if a.startedAt != b.startedAt { return a.startedAt < b.startedAt }
        if a.expiresAt != b.expiresAt { return a.expiresAt < b.expiresAt }
        if a.deviceID != b.deviceID { return a.deviceID.lexicographicallyPrecedes(b.deviceID) }
        return a.sessionID < b.sessionID
    }
}

/// The outcome of ``StreamLimit/decide(device:session:need:active:limit:whenFull:nowMilliseconds:)``.
package enum StreamDecision: Hashable, Sendable {
    /// The license needs no slot.
    case notNeeded
    /// Take a new slot until `expiresAt`; when `ending` is set, mark that stream ended (end-oldest).
    case admit(expiresAt: Int64, ending: ActiveStream?)
    /// Extend this session's slot to `expiresAt`.
    case renew(expiresAt: Int64)
    /// Keep the slot as it is; the duration answer is its remaining time.
    case hold(expiresAt: Int64)
    case refused(PolicyRefusal, String)

    package var refusal: PolicyRefusal? {
        if case .refused(let r, _) = self { return r }
        return nil
    }

    /// The lease's expiry the CKC and reply should carry; nil when no slot or refused.
    package var expiresAt: Int64? {
        switch self {
        case .admit(let e, _), .renew(let e), .hold(let e): e
        case .notNeeded, .refused: nil
        }
    }
}
