import Logging

/// Metadata keys the worker puts on log lines, in one place. Values are identifiers, statuses and
/// reasons; never keys, SPC bytes or CKC bytes.
enum LoggingKeys {
    static let requestID = "fps.request_id"
    static let tenant = "fps.tenant"
    static let status = "fps.status"
    static let rule = "fps.rule"
    static let reason = "fps.reason"
    static let leaseExpiresAt = "fps.lease_expires_at"
    static let retriable = "ksm.retriable"
}
