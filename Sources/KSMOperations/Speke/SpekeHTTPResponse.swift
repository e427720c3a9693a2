import Speke

/// What the SPEKE route answers, before it becomes a hummingbird `Response`: so the decisions are
/// tested without a socket.
package struct SpekeHTTPResponse: Sendable, Hashable {
    package var status: Int
    /// In the order to send them; a name may repeat.
    package var headers: [SpekeHTTPHeader]
    package var body: [UInt8]
    /// The `outcome` label of `ksm_speke_requests_total`.
    package var outcome: SpekeOutcome
    /// Keys in a successful answer, for `ksm_speke_keys_issued_total`; 0 otherwise.
    package var keysIssued: Int

    package init(status: Int, headers: [SpekeHTTPHeader], body: [UInt8], outcome: SpekeOutcome, keysIssued: Int = 0) {
        self.status = status
        self.headers = headers
        self.body = body
        self.outcome = outcome
        self.keysIssued = keysIssued
    }

    /// A plain-text answer: the body is `message` and a line feed, as SPEKE's error bodies are read
    /// by people and by the encryptor's logs.
    package static func text(_ status: Int, _ message: String, outcome: SpekeOutcome, headers: [SpekeHTTPHeader] = []) -> SpekeHTTPResponse {
        SpekeHTTPResponse(
            status: status, headers: [SpekeHTTPHeader("Content-Type", SpekeError.contentType)] + headers, body: Array(message.utf8), outcome: outcome)
    }

    /// The answer to a refused SPEKE request: its status and AWS's exact message, nothing added.
    package static func refusal(_ error: SpekeError) -> SpekeHTTPResponse {
        let outcome: SpekeOutcome =
            switch error.httpStatus {
            case 413: .tooLarge
            case 500...: .error
            default: .rejected
            }
        return text(error.httpStatus, error.message, outcome: outcome)
    }
}

/// One response header.
package struct SpekeHTTPHeader: Sendable, Hashable {
    package var name: String
    package var value: String

    package init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}
