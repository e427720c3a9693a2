/// What happened to a ``LeaseRequest``.
public enum LeaseResult: Sendable, Hashable {
    /// A new slot was taken; the lease ends at `expiresAtMilliseconds`.
    case granted(expiresAtMilliseconds: Int64)
    /// The slot was already held and now ends at `expiresAtMilliseconds` (never earlier than before).
    case renewed(expiresAtMilliseconds: Int64)
    /// No slot: the account already holds `activeCount` live slots of `limit` (or, for
    /// ``LeaseRefusalReason/deviceLimitReached``, registered devices of `limit`).
    case refused(reason: LeaseRefusalReason, activeCount: Int, limit: Int)
    /// A new slot was taken in a full account by ending its oldest stream, `ended` (its slot member).
    case grantedEndingOldest(expiresAtMilliseconds: Int64, ended: String)
    /// ``LeaseRequest/SlotMode/hold``: the session's slot is live until `expiresAtMilliseconds`.
    case held(expiresAtMilliseconds: Int64)
    /// No slot was asked for; the other side effects were recorded.
    case recorded

    /// The lease end for a granted or renewed lease; nil when refused.
    public var expiresAtMilliseconds: Int64? {
        switch self {
        case .granted(let at), .renewed(let at), .held(let at), .grantedEndingOldest(let at, _): at
        case .refused, .recorded: nil
        }
    }
}

/// Why a lease was refused; an open set.
public struct LeaseRefusalReason: Sendable, Hashable, CustomStringConvertible {
    /// The reason's name, as logs, metrics and replies spell it (`tooManyStreams`).
    public let rawValue: String
    /// Wraps a reason by name; a store may answer one this library does not name.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// The account holds its maximum number of concurrent streams.
    public static let tooManyStreams = LeaseRefusalReason("tooManyStreams")
    /// The account has registered its maximum of devices and this one is new.
    public static let deviceLimitReached = LeaseRefusalReason("deviceLimitReached")
    /// This session's stream was ended by a newer one (end-oldest); its renewal is refused.
    public static let streamEnded = LeaseRefusalReason("streamEnded")
    /// A hold found no live slot for the session.
    public static let noLiveSlot = LeaseRefusalReason("noLiveSlot")
    public var description: String { rawValue }
}
