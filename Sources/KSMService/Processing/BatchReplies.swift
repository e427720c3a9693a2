import FairPlay
import Licensing
import Logging

/// Where the jobs of one batch leave the pipeline: each stage answers the jobs it stops here, and
/// ``finish()`` returns every reply in input order. Only written by the stages, never read by them:
/// what is still in flight is the array a stage returns.
struct BatchReplies {
    /// The batch's jobs, in input order; a stage value names its job by index here.
    let jobs: [LicenseJob]
    private var replies: [LicenseReply?]
    private let logger: Logger
    /// Per-job log lines are debug level: below it nothing per job is formatted at all.
    private let logsJobs: Bool

    init(jobs: [LicenseJob], logger: Logger) {
        self.jobs = jobs
        self.logger = logger
        logsJobs = logger.logLevel <= .debug
        replies = Array(repeating: nil, count: jobs.count)
    }

    /// The batch's logger with job `index`'s request ID.
    private func logger(for index: Int) -> Logger {
        var log = logger
        log[metadataKey: LoggingKeys.requestID] = .string(jobs[index].id.value)
        return log
    }

    /// Decides job `index`'s reply and logs it. `request`: the job's opened SPC, once it has one (the
    /// reply names its asset ID and HU); `leaseExpiresAt` is kept only with a CKC.
    mutating func answer(
        _ index: Int, request: SPCRequest? = nil, _ status: KSMStatus, _ reason: String, rule: String, ckc: [UInt8]? = nil,
        leaseExpiresAt: Int64? = nil, retryAfterMilliseconds: Int64? = nil, nextKey: NextKeyAdvice? = nil
    ) {
        // A job sits in one stage's array at a time, so it is answered once; the first answer stands.
        guard replies[index] == nil else { return }
        let job = jobs[index]
        let expiry = ckc != nil ? leaseExpiresAt : nil
        replies[index] = LicenseReply(
            id: job.id.value, status: status, reason: reason, ckc: ckc, leaseExpiresAt: expiry,
            assetID: request.map { Array($0.assetID) }, hu: request?.hu,
            tenant: job.tenant.value, account: job.account.value, rule: rule,
            retryAfterMilliseconds: retryAfterMilliseconds)
        if status == .ok { replies[index]?.nextKey = nextKey }
        guard logsJobs else { return }
        var metadata: Logger.Metadata = [
            LoggingKeys.tenant: .string(job.tenant.value), LoggingKeys.status: .string(status.name), LoggingKeys.rule: .string(rule),
        ]
        if status != .ok { metadata[LoggingKeys.reason] = .string(reason) }
        if let expiry { metadata[LoggingKeys.leaseExpiresAt] = "\(expiry)" }
        logger(for: index).debug("job answered", metadata: metadata)
    }

    /// Answers job `index` with a reply stored when the job was first answered (published verbatim).
    mutating func answer(_ index: Int, duplicate reply: LicenseReply) {
        guard replies[index] == nil else { return }
        replies[index] = reply
        guard logsJobs else { return }
        logger(for: index).debug(
            "job answered with its stored reply", metadata: [LoggingKeys.status: .string(reply.status.name), LoggingKeys.rule: .string(reply.rule)])
    }

    /// A store call failed: every job still in flight (in input order) gets the same answer (fail closed).
    mutating func failAll(_ inFlight: some Collection<(index: Int, request: SPCRequest?)>, storeError error: any Error, during call: String) {
        let retriable = (error as? LicenseStoreError)?.isRetriable ?? false
        let message = StoreFailureReason.logMessage(error)
        logger.warning(
            "store \(call) failed; answering \(inFlight.count) jobs",
            metadata: [
                LoggingKeys.reason: "\(message)", LoggingKeys.retriable: "\(retriable)",
            ])
        for (index, request) in inFlight {
            if retriable {
                answer(index, request: request, .storeUnavailable, StoreFailureReason.reason(during: call, retriable: true), rule: "store:unavailable")
            } else {
                answer(index, request: request, KSMStatus(.internalError), StoreFailureReason.reason(during: call, retriable: false), rule: "store:error")
            }
        }
    }

    /// All replies, in input order. A job no stage answered (a bug) gets an internal error.
    mutating func finish() -> [LicenseReply] {
        var result: [LicenseReply] = []
        result.reserveCapacity(replies.count)
        for index in replies.indices {
            if replies[index] == nil {
                answer(index, KSMStatus(.internalError), "job left unanswered by the pipeline", rule: "internal")
            }
            if let reply = replies[index] { result.append(reply) }
        }
        return result
    }
}
