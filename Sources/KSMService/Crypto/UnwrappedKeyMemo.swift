import Licensing

/// Content keys unwrapped in the last few seconds, by their wrapped form, so a key-rotation storm
/// (thousands of viewers asking for the same few keys) unwraps each key once, not once per viewer.
///
/// Holding them adds no exposure a worker does not already have: whoever can read its memory can read
/// the key-encryption keys, which open every stored key. Entries are shared ``SecretBytes``, zeroed
/// when the last holder lets go. A key is never served after ``lifetime``; expired entries are
/// dropped when looked up and whenever a key is remembered, and every key of a KEK that is removed
/// or replaced is dropped at once. Not `Sendable` by itself: the keyring keeps it behind its lock.
struct UnwrappedKeyMemo {
    /// How long an unwrapped key is reused. Short: the storm lasts seconds, and a key rewritten in
    /// the store has new wrapped bytes, so it can never be served stale.
    static let lifetime: Duration = .seconds(10)
    /// Entries held at most; when full, the memo starts again (a storm needs a handful).
    static let capacity = 1_024

    private var entries: [WrappedContentKey: (key: SecretBytes, until: ContinuousClock.Instant)] = [:]

    var count: Int { entries.count }

    /// The key unwrapped from `wrapped`, if it was unwrapped less than ``lifetime`` ago.
    mutating func key(for wrapped: WrappedContentKey, now: ContinuousClock.Instant) -> SecretBytes? {
        guard let entry = entries[wrapped] else { return nil }
        guard entry.until > now else {
            entries[wrapped] = nil
            return nil
        }
        return entry.key
    }

    mutating func remember(_ key: SecretBytes, for wrapped: WrappedContentKey, now: ContinuousClock.Instant) {
        // Only when something is there to drop: a storm remembers a handful of keys, rarely.
        if !entries.isEmpty { entries = entries.filter { $0.value.until > now } }
        if entries.count >= Self.capacity { entries.removeAll() }
        entries[wrapped] = (key, now + Self.lifetime)
    }

    /// Forgets the keys unwrapped with KEK `id` (it was removed or replaced).
    mutating func forget(keyEncryptionKeyID id: StoreIdentifier) {
        entries = entries.filter { $0.key.keyEncryptionKeyID != id }
    }

    mutating func removeAll() { entries.removeAll() }
}
