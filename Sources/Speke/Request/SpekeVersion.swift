/// The SPEKE version of a request, from its `X-Speke-Version` header, and the CPIX version each
/// requires (AWS SPEKE v2: "SPEKE is aligned on a specific CPIX version").
package enum SpekeVersion: String, Sendable, Hashable, CaseIterable {
    /// SPEKE v2.0: `X-Speke-Version: 2.0`, `CPIX@version="2.3"`.
    case v2_0 = "2.0"
    /// SPEKE v2.1: `X-Speke-Version: 2.1`, `CPIX@version="2.4"`; adds key period start and end.
    case v2_1 = "2.1"

    /// The `CPIX@version` a document of this SPEKE version must carry.
    package var cpixVersion: String {
        switch self {
        case .v2_0: "2.3"
        case .v2_1: "2.4"
        }
    }

    /// The version named by an `X-Speke-Version` header value.
    /// - Throws: `Unsupported SPEKE version` (422) when the header is absent or names another version.
    ///   AWS: the key provider "shall return an error with description 'Unsupported SPEKE version'
    ///   and not try to process the CPIX document on a best effort basis"; a request without the
    ///   header is SPEKE v1, which this provider does not serve.
    package init(header: String?) throws(SpekeError) {
        guard let header, let version = SpekeVersion(rawValue: header.trimmingXMLSpace) else { throw .unsupportedSpekeVersion }
        self = version
    }
}

extension String {
    /// Without leading and trailing white space.
    var trimmingXMLSpace: String {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(self[first...last])
    }
}
