/// What the worker must do with the account's concurrent-stream lease slot before it may send the
/// CKC (the slot itself lives in the store; ``StreamLimit`` decides over a snapshot of it).
package enum LeaseSlotNeed: Hashable, Sendable {
    /// No lease: no slot.
    case none
    /// Playback state 1: take a slot for this device and session for `seconds`.
    case acquire(seconds: UInt32)
    /// Playback state 3 (and 2 when renewal is allowed): extend this session's slot by `seconds`.
    case renew(seconds: UInt32)
    /// Playback state 2 with renewal not allowed: the session must still hold its slot; nothing is
    /// extended, and the duration answer is the slot's remaining time.
    case hold
}
