internal import COpenSSL

/// Cipher and digest implementations fetched from OpenSSL's default provider once per process.
///
/// OpenSSL 3 fetches an implementation on every `EVP_aes_128_cbc()`-style init; fetching once keeps
/// that lookup off the per-request path. Fetched objects are immutable and safe to share across threads.
struct OpenSSLAlgorithms: @unchecked Sendable {
    let aes128CBC: OpaquePointer
    let aes128ECB: OpaquePointer
    let sha1: OpaquePointer
    let sha256: OpaquePointer

    static let shared: OpenSSLAlgorithms? = {
        guard let cbc = EVP_CIPHER_fetch(nil, "AES-128-CBC", nil),
            let ecb = EVP_CIPHER_fetch(nil, "AES-128-ECB", nil),
            let sha1 = EVP_MD_fetch(nil, "SHA1", nil),
            let sha256 = EVP_MD_fetch(nil, "SHA256", nil)
        else { return nil }
        return OpenSSLAlgorithms(aes128CBC: cbc, aes128ECB: ecb, sha1: sha1, sha256: sha256)
    }()

    static func get() throws(FairPlayError) -> OpenSSLAlgorithms {
        guard let shared else { throw .internal("OpenSSL default provider lacks AES-128 or SHA") }
        return shared
    }
}

/// Drains OpenSSL's thread-local error queue into one line, so the error that reaches a log says why.
func drainOpenSSLErrors() -> String {
    var parts: [String] = []
    while true {
        let code = ERR_get_error()
        if code == 0 { break }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        parts.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
    return parts.isEmpty ? "no OpenSSL error recorded" : parts.joined(separator: "; ")
}
