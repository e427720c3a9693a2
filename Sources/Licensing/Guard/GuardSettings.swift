/// A tenant's limits against floods and replays. The defaults switch both off, so a tenant that
/// never set them sees no change (docs/hostile-input.md).
public struct GuardSettings: Sendable, Hashable {
    /// At most this many jobs per account per rate window (the window length is the deployment's,
    /// `--rate-window-ms`); more are refused `rateLimited` with a retry-after. Nil: unlimited.
    package var rateLimit: Int?
    /// How long an SPC (transaction ID and SHA-256 digest) is remembered: the same SPC under another
    /// job ID within this window is refused `replayedSPC`. 0: off. Default: 0.
    package var replayWindowMilliseconds: Int64

    package init(rateLimit: Int? = nil, replayWindowMilliseconds: Int64 = 0) {
        self.rateLimit = rateLimit
        self.replayWindowMilliseconds = replayWindowMilliseconds
    }

    /// Both guards off.
    package static let off = GuardSettings()
}
