/// What a job ID was answered with: the reply's bytes and the digest of the request they answer, so
/// a job ID reused for another request (another SPC) is told apart from a redelivery and never gets
/// a CKC made for another device.
public struct StoredAnswer: Sendable, Hashable {
    /// The reply exactly as it was published.
    package var bytes: [UInt8]
    /// SHA-256 of the fields of the job that shape its answer (the caller decides which); nil for an
    /// answer stored without one (by a worker of an earlier release), which matches any request.
    package var requestDigest: [UInt8]?

    package init(bytes: [UInt8], requestDigest: [UInt8]?) {
        self.bytes = bytes
        self.requestDigest = requestDigest
    }

    /// True when this answer may be given to a request with `digest`: the same request, or one
    /// stored without a digest.
    package func answers(requestDigest digest: [UInt8]) -> Bool {
        requestDigest.map { $0 == digest } ?? true
    }
}
