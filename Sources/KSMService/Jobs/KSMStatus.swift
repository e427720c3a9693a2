import FairPlay
import Licensing

/// The status a ``LicenseReply`` carries: Apple's KSM codes (``FairPlayStatus``) where they fit, and
/// this project's codes (-43001 and below) for what Apple's SDK has no word for: tenants, leases,
/// deadlines, the store. Every code is documented in docs/status-codes.md.
///
/// A struct with static members rather than an enum, so codes can be added without breaking callers.
package struct KSMStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    package let rawValue: Int32
    package init(rawValue: Int32) { self.rawValue = rawValue }

    /// Wraps one of Apple's codes.
    package init(_ status: FairPlayStatus) { self.rawValue = status.rawValue }

    /// The license was issued (Apple's noErr).
    package static let ok = KSMStatus(.noError)

    /// The job names a tenant the store does not know.
    package static let unknownTenant = KSMStatus(rawValue: -43001)
    /// The SPC was made for an Application Certificate that this server holds but that belongs to
    /// another tenant than the job's (not in `TenantRecord.certificateHashes`).
    package static let certificateNotOwnedByTenant = KSMStatus(rawValue: -43002)
    /// The store has no content key for the SPC's asset ID (and key period).
    package static let noContentKey = KSMStatus(rawValue: -43003)
    /// The account already holds its maximum number of concurrent-stream leases.
    package static let tooManyStreams = KSMStatus(rawValue: -43004)
    /// The job's deadline had passed when the worker took it up; answered without any RSA work.
    package static let deadlineExpired = KSMStatus(rawValue: -43005)
    /// The store could not be reached or timed out. Retriable; the worker fails closed (no license
    /// without policy) and the caller may retry the job.
    package static let storeUnavailable = KSMStatus(rawValue: -43006)
    /// The job envelope is malformed: not JSON, a field missing or of the wrong type, bad base64,
    /// too large. The reason names the field.
    package static let invalidJob = KSMStatus(rawValue: -43007)
    /// The wrapped content key could not be unwrapped: unknown key-encryption key ID, wrong KEK,
    /// altered bytes, or a key or IV of the wrong size.
    package static let keyUnwrapFailed = KSMStatus(rawValue: -43008)
    /// Neither the asset nor the tenant has a policy document; the worker fails closed.
    package static let noPolicy = KSMStatus(rawValue: -43009)
    /// The policy document does not follow schemas/policy.schema.json.
    package static let invalidPolicy = KSMStatus(rawValue: -43010)
    /// Playback through AirPlay, and the policy says `airplay: deny`.
    package static let airPlayDenied = KSMStatus(rawValue: -43011)
    /// Playback through Apple's digital AV adapter, and the policy says `av-adapter: deny`.
    package static let avAdapterDenied = KSMStatus(rawValue: -43012)
    /// The client runs in a virtual machine (VM device info), and the policy says `virtual-machine: deny`.
    package static let virtualMachineDenied = KSMStatus(rawValue: -43013)
    /// The rental window has not opened yet (`rental.not-before`).
    package static let rentalNotYetValid = KSMStatus(rawValue: -43014)
    /// The rental window has closed (`rental.not-after`).
    package static let rentalExpired = KSMStatus(rawValue: -43015)
    /// The account's rental period (`rental.duration` from its first license) is over, for a new playback or download.
    package static let rentalPeriodOver = KSMStatus(rawValue: -43016)
    /// The job asks for a download and the policy allows neither offline keys nor persistable keys.
    package static let offlineNotAllowed = KSMStatus(rawValue: -43017)
    /// Retired, never sent: SDK 26 answers an offline download from a client without the offline key
    /// (capability bit 3) with a persistable content key duration, and so does the worker. The number
    /// stays reserved so a platform that maps it never reads it as something else.
    package static let offlineNeedsCapability = KSMStatus(rawValue: -43018)
    /// Playback state 3 asks to renew and `lease.renewal` is false; or state 2 finds no live slot to hold.
    package static let leaseRenewalNotAllowed = KSMStatus(rawValue: -43019)
    /// A new device and the account has registered `device-limit` devices.
    package static let deviceLimitReached = KSMStatus(rawValue: -43020)
    /// This stream was ended by a newer one (`when-full: end-oldest`); its renewal is refused.
    package static let streamEnded = KSMStatus(rawValue: -43021)
    /// The policy requires an entitlement token and the job carries none.
    package static let tokenMissing = KSMStatus(rawValue: -43022)
    /// The entitlement token is malformed, or its `alg` is not HS256.
    package static let tokenMalformed = KSMStatus(rawValue: -43023)
    /// The token's `kid` is missing or names no secret of the tenant.
    package static let tokenUnknownKeyID = KSMStatus(rawValue: -43024)
    /// The token's HMAC-SHA256 does not verify.
    package static let tokenBadSignature = KSMStatus(rawValue: -43025)
    /// The token's `exp` has passed.
    package static let tokenExpired = KSMStatus(rawValue: -43026)
    /// The token's `nbf` is still ahead.
    package static let tokenNotYetValid = KSMStatus(rawValue: -43027)
    /// The token's `sub` is not the job's account.
    package static let tokenWrongAccount = KSMStatus(rawValue: -43028)
    /// The token covers neither this asset nor a pattern matching it.
    package static let tokenWrongAsset = KSMStatus(rawValue: -43029)
    /// The token names another tenant.
    package static let tokenWrongTenant = KSMStatus(rawValue: -43030)
    /// The worker sheds load: a prefetch or new-session job would wait longer than the scheduling
    /// policy allows. Retriable; the reply's `retry-after-ms` says when (jittered, so shed clients
    /// spread out instead of returning together).
    package static let overloaded = KSMStatus(rawValue: -43031)
    /// The SPC was already answered for another job (same transaction ID and SPC digest) within the
    /// tenant's anti-replay window: a captured SPC sent again. A redelivered job (same job ID) is not
    /// a replay; it gets its stored reply.
    package static let replayedSPC = KSMStatus(rawValue: -43032)
    /// The account sent more jobs in the current rate window than its tenant allows. Retriable; the
    /// reply's `retry-after-ms` says when the window ends.
    package static let rateLimited = KSMStatus(rawValue: -43033)
    /// A v2 sync SPC did not carry the server challenge the job names (`server-challenge`): nothing
    /// is recorded or invalidated.
    package static let syncChallengeMismatch = KSMStatus(rawValue: -43034)
    /// The job ID was answered before for a different request (another SPC, or other fields that
    /// shape the CKC) within the stored-reply window: the earlier answer would not open on this
    /// device, and a new one under the same ID would break redelivery. Send it under a new job ID.
    package static let jobIdReused = KSMStatus(rawValue: -43035)
    /// The job's `reply-topic` header names a topic outside the worker's allowed reply topics
    /// (``ReplyTopicPolicy``): the job is not processed, and this answer goes to the default replies
    /// topic instead. Final: the same job would be refused again.
    package static let replyTopicRefused = KSMStatus(rawValue: -43036)

    /// The status a policy refusal is answered with (the engine's codes travel as raw values,
    /// since Licensing cannot see this type).
    package init(_ refusal: PolicyRefusal) { self.rawValue = refusal.status }

    /// The project's own codes, in code order.
    package static let projectCodes: [KSMStatus] = [
        .unknownTenant, .certificateNotOwnedByTenant, .noContentKey, .tooManyStreams, .deadlineExpired,
        .storeUnavailable, .invalidJob, .keyUnwrapFailed, .noPolicy, .invalidPolicy,
        .airPlayDenied, .avAdapterDenied, .virtualMachineDenied, .rentalNotYetValid, .rentalExpired, .rentalPeriodOver,
        .offlineNotAllowed, .offlineNeedsCapability, .leaseRenewalNotAllowed, .deviceLimitReached, .streamEnded,
        .tokenMissing, .tokenMalformed, .tokenUnknownKeyID, .tokenBadSignature, .tokenExpired, .tokenNotYetValid,
        .tokenWrongAccount, .tokenWrongAsset, .tokenWrongTenant, .overloaded, .replayedSPC, .rateLimited, .syncChallengeMismatch,
        .jobIdReused, .replyTopicRefused,
    ]

    /// Every code a reply can carry: Apple's server codes, then the project's.
    package static let allKnown: [KSMStatus] = FairPlayStatus.allKnown.map(KSMStatus.init) + projectCodes

    /// True when the same job may succeed if sent again later (``storeUnavailable``, ``overloaded``,
    /// ``rateLimited``).
    package var isRetriable: Bool { self == .storeUnavailable || self == .overloaded || self == .rateLimited }

    /// True for the project's codes, false for Apple's.
    package var isProjectCode: Bool { (-43999 ... -43001).contains(rawValue) }

    /// A stable name: Apple's spelling for Apple's codes, lowerCamelCase for the project's.
    package var name: String {
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
        case -43032: "replayedSPC"
        case -43033: "rateLimited"
        case -43035: "jobIdReused"
        case -43036: "replyTopicRefused"
        default:
            // The policy engine's codes (-43011...-43030, -43034) are named where they are defined.
            if isProjectCode, let refusal = PolicyRefusal.allCases.first(where: { $0.status == rawValue }) {
                refusal.statusName
            } else {
                FairPlayStatus(rawValue: rawValue).name
            }
        }
    }

    package var description: String { "\(name) (\(rawValue))" }
}
