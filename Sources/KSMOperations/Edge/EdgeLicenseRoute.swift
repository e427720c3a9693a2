import Foundation
import KSMService
import Kafka
import Licensing
import Logging

/// One player's license request from route to answer: tenant, admission, body, job, Kafka, reply.
///
/// Order: the route's tenant, then admission (``EdgeAdmission``: nothing of a refused request's body
/// is read), then the body's size and shape, the priority and the request ID, then room in the
/// pending table (at ``EdgeConfiguration/maximumInFlight`` the answer is 503 at once), then the job
/// is produced and the reply awaited until the deadline. Every path answers, and every path out of a
/// reserved request removes its entry (a `defer`). Logs name the tenant, the request ID, the
/// outcome; never a token, an SPC or a CKC byte.
package struct EdgeLicenseRoute: Sendable {
    /// The request body as the server read it, capped (``BoundedRequestBody``).
    package typealias Body = BoundedRequestBody

    /// What the route needs of an HTTP request.
    package struct Request: Sendable {
        /// The route's `{tenant}` segment, as written.
        package var tenant: String
        /// Every header as received.
        package var headers: [(name: String, value: String)]
        package var query: [String: String]
        /// The connection's peer address; nil when unknown.
        package var clientAddress: String?
        /// Reads the body; called only once the request is admitted.
        package var readBody: @Sendable () async -> Body

        package init(
            tenant: String, headers: [(name: String, value: String)], query: [String: String] = [:], clientAddress: String? = nil,
            readBody: @escaping @Sendable () async -> Body
        ) {
            self.tenant = tenant
            self.headers = headers
            self.query = query
            self.clientAddress = clientAddress
            self.readBody = readBody
        }

        func header(_ name: String) -> String? {
            let lower = name.lowercased()
            // The length first: most names differ in it, and lowercasing allocates.
            return headers.first { $0.name.utf8.count == lower.utf8.count && $0.name.lowercased() == lower }?.value
        }
    }

    /// The answer and the labels it is counted under.
    package struct Result: Sendable {
        package var answer: LicenseHTTPAnswer
        package var outcome: EdgeOutcome
        /// The admitted tenant; nil before admission.
        package var tenant: String?
        package var priority: String?
        package var shape: String?
    }

    /// Hands one record to the producer without waiting for the broker: nil once it was taken, else
    /// why not. The second argument runs (once, on the producer's thread) if the broker later
    /// refuses the record or it times out; the request then ends without waiting for its deadline.
    package typealias Produce = @Sendable (KafkaProducer.Record, _ onFailure: @escaping @Sendable (KafkaError) -> Void) -> KafkaError?

    package let configuration: EdgeConfiguration
    package let admission: any EdgeAdmission
    package let waiters: EdgeReplyWaiters
    package let correlationIDs: EdgeCorrelationIDs
    package let produce: Produce
    package let logger: Logger
    /// Milliseconds since 1970 now (the job's `deadline` is this plus ``EdgeConfiguration/deadline``).
    package let wallClock: @Sendable () -> Int64
    /// Nil when a job can be produced and its reply read (the producer reached a broker, the reply
    /// topic is assigned); else why not: the request is answered 503 at once rather than produced
    /// for a reply nobody would read.
    package let notReadyReason: @Sendable () -> String?

    /// The headers a request may set.
    package static let requestIDHeader = "X-Request-ID"
    package static let priorityHeader = "X-Priority"
    /// `Retry-After` of a 504 and of a 503 for overload, in seconds.
    package static let retryAfterSeconds = 1

    package init(
        configuration: EdgeConfiguration, admission: any EdgeAdmission, waiters: EdgeReplyWaiters, correlationIDs: EdgeCorrelationIDs,
        produce: @escaping Produce, logger: Logger,
        wallClock: @escaping @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1_000).rounded(.down)) },
        notReadyReason: @escaping @Sendable () -> String? = { nil }
    ) {
        self.notReadyReason = notReadyReason
        self.configuration = configuration
        self.admission = admission
        self.waiters = waiters
        self.correlationIDs = correlationIDs
        self.produce = produce
        self.logger = logger
        self.wallClock = wallClock
    }

    /// The answer to `POST /fps/{tenant}/license`.
    package func answer(_ request: Request) async -> Result {
        let start = ContinuousClock.now
        // The job's deadline is the edge's own, on the wall clock: a slow upload shortens both.
        let deadlineMilliseconds = wallClock() + configuration.deadline.wholeMilliseconds
        let deadline = start + configuration.deadline
        guard let tenant = try? StoreIdentifier(request.tenant) else {
            return Result(answer: .text(404, "no such tenant: the route is /fps/{tenant}/license"), outcome: .rejected)
        }
        let account: StoreIdentifier
        let entitlement: String
        switch await admission.admit(
            EdgeAdmissionRequest(tenant: tenant, headers: request.headers, query: request.query, clientAddress: request.clientAddress))
        {
        case .refuse(let status, let reason, let headers):
            return Result(answer: .text(status, reason, headers: headers), outcome: .rejected)
        case .admit(let admitted, let token):
            account = admitted
            entitlement = token
        }
        var result = Result(answer: .text(500, "unanswered"), outcome: .rejected, tenant: tenant.value)

        let bytes: [UInt8]
        switch await request.readBody() {
        case .tooLarge:
            result.answer = LicenseHTTPRequestError(
                status: 413, "body exceeds the \(configuration.maximumRequestBytes)-byte limit", code: KSMStatus(.memoryError)
            ).answer()
            return result
        case .bytes(let body): bytes = body
        }
        let parsed: LicenseHTTPRequest
        do throws(LicenseHTTPRequestError) {
            parsed = try LicenseHTTPRequest.parse(
                body: bytes, contentType: request.header("Content-Type"), query: request.query, maximumBodySize: configuration.maximumRequestBytes)
        } catch {
            result.answer = error.answer()
            result.shape = error.shape?.rawValue
            return result
        }
        result.shape = parsed.shape.rawValue

        var priority = LicenseJob.Priority.new
        if let given = parsed.priority {
            priority = given
        } else if let text = request.header(Self.priorityHeader) {
            guard let header = LicenseJob.Priority(rawValue: text.trimmingWhiteSpace) else {
                result.answer = LicenseHTTPRequestError(status: 400, "\(Self.priorityHeader) must be continuity, new or prefetch", shape: parsed.shape).answer()
                return result
            }
            priority = header
        }
        result.priority = priority.rawValue

        let jobID: StoreIdentifier
        if let text = request.header(Self.requestIDHeader) {
            guard let id = try? StoreIdentifier(text) else {
                result.answer = LicenseHTTPRequestError(
                    status: 400, "\(Self.requestIDHeader) must be 1 to 128 bytes without white space, control characters, ':', '{' or '}'",
                    shape: parsed.shape
                ).answer()
                return result
            }
            jobID = id
        } else {
            // Identifier-safe by construction: 36 bytes of hex digits and dashes.
            guard let generated = try? StoreIdentifier(UUID().uuidString.lowercased()) else { preconditionFailure("a UUID is a valid identifier") }
            jobID = generated
        }
        // The request's identity rides in each log call's metadata, built only when the level is on:
        // setting a logger's metadata re-renders it per request (StreamLogHandler), a cost even when
        // nothing is logged.
        func metadata(_ extra: Logger.Metadata = [:]) -> Logger.Metadata {
            extra.merging(["fps.request_id": "\(jobID.value)", "fps.tenant": "\(tenant.value)"]) { given, _ in given }
        }

        if let reason = notReadyReason() {
            result.answer = parsed.unavailableAnswer(reason: "the edge is not ready: \(reason)", retryAfterSeconds: Self.retryAfterSeconds)
            result.outcome = .unavailable
            return result
        }
        let correlationID = correlationIDs.next()
        switch waiters.reserve(correlationID, deadline: deadline) {
        case .reserved: break
        case .atCapacity, .duplicate:
            result.answer = parsed.unavailableAnswer(
                reason: "the edge has \(configuration.maximumInFlight) requests waiting", retryAfterSeconds: Self.retryAfterSeconds)
            result.outcome = .overloaded
            return result
        }
        defer { waiters.remove(correlationID) }

        let job = LicenseJob(
            id: jobID, tenant: tenant, account: account, spc: parsed.spc, deadline: deadlineMilliseconds, priority: priority, entitlement: entitlement)
        let headers: [(String, [UInt8])] =
            [
                ("correlation-id", Array(correlationID.utf8)),
                ("reply-topic", Array(configuration.replyTopic.utf8)),
            ] + JobTracing.passThrough(Self.traceHeaders(request.headers))
        // The account keys the record, as platforms key jobs; an anonymous request is keyed by its
        // job ID, so anonymous traffic spreads over the partitions instead of landing on one.
        let key = account == HeaderAccountAdmission.anonymous ? jobID.value : account.value
        let record = KafkaProducer.Record(
            topic: configuration.requestTopic(for: priority), key: Array("\(tenant.value)/\(key)".utf8), value: job.jsonBytes(), headers: headers)
        let outcome: EdgeWaitResult
        if Task.isCancelled {
            // A shutdown out of time: no job for a player who is answered 503 now.
            outcome = .cancelled
        } else if let failure = produce(record, { [waiters] error in waiters.fail(correlationID, error) }) {
            outcome = .notQueued(failure)
        } else {
            outcome = await waiters.wait(correlationID)
        }

        switch outcome {
        case .notQueued(let failure):
            logger.warning("license job not produced", metadata: metadata(["error": "\(failure)"]))
            result.answer = parsed.unavailableAnswer(reason: "the request could not be queued", retryAfterSeconds: Self.retryAfterSeconds)
            result.outcome = .unavailable
        case .reply(let reply):
            result.answer = parsed.answer(to: reply)
            result.outcome = .answered
            logger.debug("answered", metadata: metadata(["status": "\(reply.status.rawValue)", "rule": "\(reply.rule)"]))
        case .timedOut:
            result.answer = parsed.timeoutAnswer(retryAfterSeconds: Self.retryAfterSeconds)
            result.outcome = .timeout
            logger.info("no reply before the deadline", metadata: metadata(["deadline_ms": "\(configuration.deadline.wholeMilliseconds)"]))
        case .cancelled:
            result.answer = parsed.unavailableAnswer(reason: "the edge is stopping", retryAfterSeconds: Self.retryAfterSeconds)
            result.outcome = .unavailable
        }
        return result
    }
}

extension EdgeLicenseRoute {
    /// The request's `traceparent` and `tracestate` headers, names lowercased, for
    /// `JobTracing.passThrough`; no other header is copied.
    static func traceHeaders(_ headers: [(name: String, value: String)]) -> [(String, [UInt8])] {
        headers.compactMap { header in
            let count = header.name.utf8.count
            guard count == JobTracing.traceparent.utf8.count || count == JobTracing.tracestate.utf8.count else { return nil }
            let name = header.name.lowercased()
            return name == JobTracing.traceparent || name == JobTracing.tracestate ? (name, Array(header.value.utf8)) : nil
        }
    }
}

extension LicenseHTTPAnswer {
    /// A plain-text answer before the body's shape is known (a route, an admission refusal):
    /// `message` and a line feed, with `Cache-Control: no-store`.
    package static func text(_ status: Int, _ message: String, headers: [LicenseHTTPHeader] = []) -> LicenseHTTPAnswer {
        LicenseHTTPAnswer(
            status: status, contentType: "text/plain; charset=utf-8", headers: [LicenseHTTPHeader(name: "Cache-Control", value: "no-store")] + headers,
            body: Array((message + "\n").utf8))
    }
}

extension Duration {
    /// Whole milliseconds, rounded down.
    var wholeMilliseconds: Int64 {
        components.seconds * 1_000 + components.attoseconds / 1_000_000_000_000_000
    }
}
