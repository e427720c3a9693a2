import FairPlay

/// The status a ``LicenseReply`` carries: Apple's KSM codes (``FairPlayStatus``) where they fit, and
/// this project's codes (-43001 and below) for what Apple's SDK has no word for: tenants, leases,
/// deadlines, the store. Every code is documented in docs/status-codes.md.
///
/// A struct with static members rather than an enum, so codes can be added without breaking callers.
public struct KSMStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// Wraps one of Apple's codes.
    public init(_ status: FairPlayStatus) { self.rawValue = status.rawValue }

    /// The license was issued (Apple's noErr).
    public static let ok = KSMStatus(.noError)

    /// The job names a tenant the store does not know.
    public static let unknownTenant = KSMStatus(rawValue: -43001)
    /// The SPC was made for an Application Certificate that this server holds but that belongs to
    /// another tenant than the job's (not in `TenantRecord.certificateHashes`).
    public static let certificateNotOwnedByTenant = KSMStatus(rawValue: -43002)
    /// The store has no content key for the SPC's asset ID (and key period).
    public static let noContentKey = KSMStatus(rawValue: -43003)
    /// The account already holds its maximum number of concurrent-stream leases.
    public static let tooManyStreams = KSMStatus(rawValue: -43004)
    /// The job's deadline had passed when the worker took it up; answered without any RSA work.
    public static let deadlineExpired = KSMStatus(rawValue: -43005)
    /// The store could not be reached or timed out. Retriable; the worker fails closed (no license
    /// without policy) and the caller may retry the job.
    public static let storeUnavailable = KSMStatus(rawValue: -43006)
    /// The job envelope is malformed: not JSON, a field missing or of the wrong type, bad base64,
    /// too large. The reason names the field.
    public static let invalidJob = KSMStatus(rawValue: -43007)
    /// The wrapped content key could not be unwrapped: unknown key-encryption key ID, wrong KEK,
    /// altered bytes, or a key or IV of the wrong size.
    public static let keyUnwrapFailed = KSMStatus(rawValue: -43008)
    /// Neither the asset nor the tenant has a policy document; the worker fails closed.
    public static let noPolicy = KSMStatus(rawValue: -43009)
    /// The policy document does not follow schemas/policy.schema.json.
    public static let invalidPolicy = KSMStatus(rawValue: -43010)
    /// The worker sheds load: a prefetch or new-session job would wait longer than the scheduling
    /// policy allows. Retriable; the reply's `retry-after-ms` says when (jittered, so shed clients
    /// spread out instead of returning together).
    public static let overloaded = KSMStatus(rawValue: -43031)

    /// The project's own codes, in code order.
    public static let projectCodes: [KSMStatus] = [
        .unknownTenant, .certificateNotOwnedByTenant, .noContentKey, .tooManyStreams, .deadlineExpired,
        .storeUnavailable, .invalidJob, .keyUnwrapFailed, .noPolicy, .invalidPolicy, .overloaded,
    ]

    /// Every code a reply can carry: Apple's server codes, then the project's.
    public static let allKnown: [KSMStatus] = FairPlayStatus.allKnown.map(KSMStatus.init) + projectCodes

    /// True when the same job may succeed if sent again later (``storeUnavailable``, ``overloaded``).
    public var isRetriable: Bool { self == .storeUnavailable || self == .overloaded }

    /// True for the project's codes, false for Apple's.
    public var isProjectCode: Bool { (-43999 ... -43001).contains(rawValue) }

    /// A stable name: Apple's spelling for Apple's codes, lowerCamelCase for the project's.
    public var name: String {
        switch rawValue {
        case -43001: "unknownTenant"
        case -43002: "certificateNotOwnedByTenant"
        case -43003: "noContentKey"
        case -43004: "tooManyStreams"
        case -43005: "deadlineExpired"
        case -43006: "storeUnavailable"
        case -43007: "invalidJob"
        case -43008: "keyUnwrapFailed"
        case -43009: "noPolicy"
        case -43010: "invalidPolicy"
        case -43031: "overloaded"
        default: FairPlayStatus(rawValue: rawValue).name
        }
    }

    public var description: String { "\(name) (\(rawValue))" }
}
