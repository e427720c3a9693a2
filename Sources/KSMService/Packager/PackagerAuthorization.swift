import Wire

/// A packager's `Authorization` header value, parsed: `Bearer <token>` (RFC 6750), or `Basic
/// <base64 of "<credential ID>:<token>">` (RFC 7617) for packagers that only speak Basic. The
/// scheme is case-insensitive; anything else is nil.
///
/// Holds the credential: never log or describe it (`description` names only the form).
package struct PackagerAuthorization: Sendable, CustomStringConvertible {
    /// The presented token's UTF-8 bytes.
    package let token: [UInt8]
    /// The Basic form's user, which must be the credential's ID; nil for a bearer token.
    package let user: String?

    /// The longest header value read; a token is 49 characters, so anything much longer is not one.
    package static let maximumLength = 1024

    package init?(headerValue: String) {
        let bytes = Array(headerValue.utf8)
        guard bytes.count <= Self.maximumLength, let space = bytes.firstIndex(of: UInt8(ascii: " ")) else { return nil }
        let scheme = String(decoding: bytes[..<space], as: UTF8.self).lowercased()
        let value = Array(bytes[space...].drop { $0 == UInt8(ascii: " ") })
        guard !value.isEmpty else { return nil }
        switch scheme {
        case "bearer":
            token = value
            user = nil
        case "basic":
            guard let decoded = Base64.decode(value), let colon = decoded.firstIndex(of: UInt8(ascii: ":")),
                let name = String(validating: decoded[..<colon], as: UTF8.self)
            else { return nil }
            token = Array(decoded[(colon + 1)...])
            user = name
        default:
            return nil
        }
    }

    package var description: String { user == nil ? "bearer credential" : "basic credential" }
}
