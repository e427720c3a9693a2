import Logging

/// Metadata keys the worker puts on log lines, in one place. Values are identifiers, statuses and
/// reasons; never keys, SPC bytes or CKC bytes.
package enum LoggingKeys {
    package static let requestID = "fps.request_id"
    package static let tenant = "fps.tenant"
    package static let status = "fps.status"
    package static let rule = "fps.rule"
    package static let reason = "fps.reason"
    package static let leaseExpiresAt = "fps.lease_expires_at"
    package static let retriable = "ksm.retriable"
}
