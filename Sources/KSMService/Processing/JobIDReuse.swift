import Licensing

/// The answer to a job whose ID was already answered for a different request.
enum JobIDReuse {
    static let rule = "job:id-reused"

    static func reason(_ jobID: StoreIdentifier, ttlMilliseconds: Int64) -> String {
        "job ID \(jobID.value) was answered for a different request (another SPC or other job fields) within the last \(max(1, ttlMilliseconds / 1000)) s; send each request under a job ID of its own"
    }
}
