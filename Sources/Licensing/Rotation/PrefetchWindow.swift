import Wire

/// The stretch of time before a rotation boundary in which viewers are told to fetch the next key,
/// and each viewer's place in it.
///
/// Spreading the next-key requests of N viewers evenly over the window turns a rotation's storm of N
/// requests within a second into a steady N / window per second. A viewer's place is a pure function
/// of who it is and the boundary (no randomness, no per-process hash seed), so a job answered twice
/// advertises the same time, and every worker of a fleet places the same viewer at the same instant.
package struct PrefetchWindow: Sendable, Hashable {
    /// How long the window lasts, in milliseconds; 0 advertises nothing.
    package var windowMilliseconds: Int64
    /// How long before the boundary the window closes, in milliseconds: time for the last request to
    /// be queued, answered and delivered before the next key period starts.
    package var marginMilliseconds: Int64

    /// Defaults: a 60 s window closing 10 s before the boundary.
    package init(windowMilliseconds: Int64 = 60_000, marginMilliseconds: Int64 = 10_000) {
        self.windowMilliseconds = windowMilliseconds
        self.marginMilliseconds = marginMilliseconds
    }

    package var isEnabled: Bool { windowMilliseconds > 0 }

    /// When this viewer should ask for the key that takes over at `boundaryMilliseconds`, in
    /// milliseconds since 1970; nil when the window is off or has already closed at `nowMilliseconds`.
    ///
    /// Before the window opens the answer depends only on the viewer and the boundary. A viewer
    /// answered inside the window is placed in what remains of it (never in the past), so late
    /// joiners spread out too.
    package func fetchTime(boundaryMilliseconds: Int64, viewer: ViewerIdentity, nowMilliseconds: Int64) -> Int64? {
        guard isEnabled else { return nil }
        let closes = boundaryMilliseconds - marginMilliseconds
        let opens = max(closes - windowMilliseconds, nowMilliseconds)
        guard opens < closes else { return nil }
        let span = UInt64(closes - opens)
        // The high 64 bits of hash × span: uniform over 0..<span for a uniform hash, no modulo bias.
        let offset = viewer.hash(boundaryMilliseconds: boundaryMilliseconds).multipliedFullWidth(by: span).high
        return opens + Int64(offset)
    }

    /// Who a viewer is, for its place in a window: tenant, account and playback session (or, when the
    /// SPC carries no session, its device). Equal and hashed by the fields' bytes, as
    /// ``hash(boundaryMilliseconds:)`` reads them.
    package struct ViewerIdentity: Sendable, Hashable {
        package var tenant: String
        package var account: String
        package var session: [UInt8]

        package init(tenant: String, account: String, session: [UInt8]) {
            self.tenant = tenant
            self.account = account
            self.session = session
        }

        package init(tenant: String, account: String, sessionID: UInt64) {
            self.init(tenant: tenant, account: account, session: withUnsafeBytes(of: sessionID.bigEndian) { Array($0) })
        }

        package static func == (lhs: Self, rhs: Self) -> Bool {
            ByteKey.equal(lhs.tenant, rhs.tenant) && ByteKey.equal(lhs.account, rhs.account) && lhs.session == rhs.session
        }

        package func hash(into hasher: inout Hasher) {
            ByteKey.hash(tenant, into: &hasher)
            ByteKey.hash(account, into: &hasher)
            ByteKey.hash(bytes: session, into: &hasher)
        }

        /// FNV-1a over the fields (each length-prefixed, so field boundaries cannot be moved) and
        /// the boundary, finished with SplitMix64's mixer: stable across processes and releases.
        func hash(boundaryMilliseconds: Int64) -> UInt64 {
            var h: UInt64 = 0xcbf2_9ce4_8422_2325
            func mix(_ byte: UInt8) {
                h ^= UInt64(byte)
                h = h &* 0x0000_0100_0000_01b3
            }
            func field(_ bytes: some Collection<UInt8>) {
                withUnsafeBytes(of: UInt32(truncatingIfNeeded: bytes.count).bigEndian) { $0.forEach(mix) }
                bytes.forEach(mix)
            }
            field(tenant.utf8)
            field(account.utf8)
            field(session)
            withUnsafeBytes(of: boundaryMilliseconds.bigEndian) { $0.forEach(mix) }
            var z = h &+ 0x9e37_79b9_7f4a_7c15
            z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
            z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
            return z ^ (z >> 31)
        }
    }
}
