/// What happened to a ``LeaseRequest``.
public enum LeaseResult: Sendable, Hashable {
    /// A new slot was taken; the lease ends at `expiresAtMilliseconds`.
    case granted(expiresAtMilliseconds: Int64)
    /// The slot was already held and now ends at `expiresAtMilliseconds` (never earlier than before).
    case renewed(expiresAtMilliseconds: Int64)
    /// No slot: the account already holds `activeCount` live slots of `limit`.
    case refused(reason: LeaseRefusalReason, activeCount: Int, limit: Int)

    /// The lease end for a granted or renewed lease; nil when refused.
    public var expiresAtMilliseconds: Int64? {
        switch self {
        case .granted(let at), .renewed(let at): at
        case .refused: nil
        }
    }

    /// A compact text form, used by stores to keep an idempotency record:
    /// `g:<ms>`, `r:<ms>`, `x:<reason>:<active>:<limit>`.
    public var encoded: String {
        switch self {
        case .granted(let at): "g:\(at)"
        case .renewed(let at): "r:\(at)"
        case .refused(let reason, let active, let limit): "x:\(reason):\(active):\(limit)"
        }
    }

    /// Parses ``encoded``; nil if malformed.
    public init?(encoded: some StringProtocol) {
        let parts = encoded.split(separator: ":", omittingEmptySubsequences: false)
        switch (parts.first, parts.count) {
        case ("g", 2):
            guard let at = Int64(parts[1]) else { return nil }
            self = .granted(expiresAtMilliseconds: at)
        case ("r", 2):
            guard let at = Int64(parts[1]) else { return nil }
            self = .renewed(expiresAtMilliseconds: at)
        case ("x", 4):
            guard let active = Int(parts[2]), let limit = Int(parts[3]) else { return nil }
            self = .refused(reason: LeaseRefusalReason(String(parts[1])), activeCount: active, limit: limit)
        default:
            return nil
        }
    }
}

/// Why a lease was refused; an open set.
public struct LeaseRefusalReason: Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// The account holds its maximum number of concurrent streams.
    public static let tooManyStreams = LeaseRefusalReason("tooManyStreams")
    public var description: String { rawValue }
}
