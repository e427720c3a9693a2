import Licensing

/// The `reason` a job gets when a store call fails: a sentence for the platform's people naming the
/// step and what to do, never the backend's own text (it carries internal addresses and debug
/// descriptions; the worker's log has it, at warning).
enum StoreFailureReason {
    /// - Parameter call: the pipeline step (`fetch`, `admit`, `claim`, `acquireLeases`, `storeReplies`).
    static func reason(during call: String, retriable: Bool) -> String {
        let step =
            switch call {
            case "fetch": "reading the tenant, content key and policy"
            case "admit": "looking up the job's earlier answer"
            case "claim": "checking the SPC against replays"
            case "acquireLeases": "taking the lease slot"
            case "storeReplies": "keeping the answer for redeliveries"
            default: "answering the job"
            }
        return retriable
            ? "license store unavailable while \(step); nothing was granted; send the same job again after retry-after-ms"
            : "license store error while \(step); nothing was granted; retrying will not help until an operator fixes the store (the worker's log says why)"
    }

    static let notProvisionedRule = "store:not-provisioned"
    static let notProvisioned =
        "the license store holds no tenants (it lost its data or is being provisioned again); nothing was granted; send the same job again after retry-after-ms"

    /// The text to log: the store's own message, which names the backend's fault.
    static func logMessage(_ error: any Error) -> String {
        (error as? LicenseStoreError)?.message ?? "\(error)"
    }
}
