import Licensing

/// Policy documents parsed once per batch, keyed by their bytes: most jobs of a batch share the
/// tenant's default and a few asset documents, and parsing is the costly part of policy.
struct PolicyDocumentCache {
    private var parsed: [[UInt8]: Result<PolicyDocument, PolicyDocumentError>] = [:]

    /// The document, or the error naming the field; nil bytes give nil.
    mutating func document(_ bytes: [UInt8]?) -> Result<PolicyDocument, PolicyDocumentError>? {
        guard let bytes else { return nil }
        if let known = parsed[bytes] { return known }
        let result: Result<PolicyDocument, PolicyDocumentError>
        do throws(PolicyDocumentError) { result = .success(try PolicyDocument(json: bytes)) } catch { result = .failure(error) }
        parsed[bytes] = result
        return result
    }
}
