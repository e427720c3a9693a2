/// A status code of Apple's KSM (FairPlay Streaming Server SDK 26), the number a reply carries.
///
/// A struct with static members rather than an enum, so codes can be added without breaking callers.
public struct FairPlayStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The signed 32-bit code as Apple's KSM reports it (0 success, negative for an error).
    public let rawValue: Int32
    /// Wraps any code, including one this library does not name.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// Success: the reply carries a CKC.
    public static let noError = FairPlayStatus(rawValue: 0)
    /// The SPC container version is not 1 or 2 (or 3 without Apple's library).
    public static let spcVersionError = FairPlayStatus(rawValue: -42580)
    /// The SPC or one of its TLLVs is malformed.
    public static let parserError = FairPlayStatus(rawValue: -42581)
    /// A TLLV the KSM needs, or one the tag return request lists, is absent.
    public static let missingRequiredTag = FairPlayStatus(rawValue: -42583)
    /// A request parameter (content key, durations, policy combination) is invalid.
    public static let parameterError = FairPlayStatus(rawValue: -42585)
    /// A size limit was exceeded before anything was allocated.
    public static let memoryError = FairPlayStatus(rawValue: -42586)
    /// The [SK..R1] integrity value does not match.
    public static let integrityError = FairPlayStatus(rawValue: -42589)
    /// Protocol version negotiation failed: no common version, or a downgrade.
    public static let versionError = FairPlayStatus(rawValue: -42590)
    /// A TLLV tag appears more than once.
    public static let duplicateTag = FairPlayStatus(rawValue: -42591)
    /// A cryptographic primitive failed inside the server.
    public static let internalError = FairPlayStatus(rawValue: -42601)
    /// The client's security level is below what the content requires.
    public static let clientSecurityLevel = FairPlayStatus(rawValue: -42604)
    /// The SPC was made for an Application Certificate this server does not hold.
    public static let invalidCertificate = FairPlayStatus(rawValue: -42605)
    /// The request needs something this deployment does not have (for example Apple's libfpscrypto).
    public static let notImplemented = FairPlayStatus(rawValue: -42612)

    /// Every server-side status Apple's SDK defines, in code order.
    public static let allKnown: [FairPlayStatus] = [
        .noError, .spcVersionError, .parserError, .missingRequiredTag, .parameterError, .memoryError,
        .integrityError, .versionError, .duplicateTag, .internalError, .clientSecurityLevel,
        .invalidCertificate, .notImplemented,
    ]

    /// Apple's name for the code, as its SDK spells it.
    public var name: String {
        switch rawValue {
        case 0: "noErr"
        case -42580: "spcVersionErr"
        case -42581: "parserErr"
        case -42583: "missingRequiredTagErr"
        case -42585: "paramErr"
        case -42586: "memoryErr"
        case -42589: "integrityErr"
        case -42590: "versionErr"
        case -42591: "dupTagErr"
        case -42601: "internalErr"
        case -42604: "clientSecurityLevelErr"
        case -42605: "invalidCertificateErr"
        case -42612: "notImplementedErr"
        default: "status(\(rawValue))"
        }
    }

    public var description: String { "\(name) (\(rawValue))" }
}
