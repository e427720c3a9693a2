/// Why the FairPlay layer refused an SPC or a CKC request.
///
/// Carries Apple's status code for the reply and a reason that names the offending field, never a
/// key or a payload byte. `tag` is set when one TLLV is to blame.
public struct FairPlayError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The status code a reply reports for this failure.
    public var status: FairPlayStatus
    /// What was wrong, naming the field or tag; safe to log (no key or payload bytes).
    public var reason: String
    package var tag: TLLVTag?

    package init(_ status: FairPlayStatus, _ reason: String, tag: TLLVTag? = nil) {
        self.status = status
        self.reason = reason
        self.tag = tag
    }

    public var description: String {
        if let tag { return "\(status): \(reason) [tag \(tag)]" }
        return "\(status): \(reason)"
    }

    static func parser(_ reason: String, tag: TLLVTag? = nil) -> FairPlayError {
        FairPlayError(.parserError, reason, tag: tag)
    }

    static func param(_ reason: String, tag: TLLVTag? = nil) -> FairPlayError {
        FairPlayError(.parameterError, reason, tag: tag)
    }

    static func `internal`(_ reason: String) -> FairPlayError {
        FairPlayError(.internalError, reason)
    }
}
