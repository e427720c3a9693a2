internal import COpenSSL

/// HMAC-SHA256 through OpenSSL's one-shot `HMAC`, and a constant-time comparison
/// (`CRYPTO_memcmp`) so that a forger learns nothing from how long a wrong tag takes to refuse.
enum HMACSHA256 {
    static let length = 32

    static func mac(key: [UInt8], message: some Collection<UInt8>) -> [UInt8] {
        let data = Array(message)
        var out = [UInt8](repeating: 0, count: length)
        var outLength: UInt32 = 0
        let ok = key.withUnsafeBufferPointer { k in
            data.withUnsafeBufferPointer { d in
                out.withUnsafeMutableBufferPointer { o in
                    HMAC(EVP_sha256(), k.baseAddress, Int32(k.count), d.baseAddress, d.count, o.baseAddress, &outLength) != nil
                }
            }
        }
        // HMAC over memory with SHA-256 only fails if OpenSSL cannot allocate; nothing sensible remains.
        precondition(ok && Int(outLength) == length, "OpenSSL HMAC-SHA256 failed")
        return out
    }

    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in CRYPTO_memcmp(pa.baseAddress, pb.baseAddress, a.count) == 0 } }
    }
}
