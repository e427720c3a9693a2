/// The credentials one server holds, found by certificate hash (fps-facts.md: several at once).
public struct CredentialStore: Sendable {
    private let byHash: [[UInt8]: ApplicationCredential]
    /// The same credentials by SHA-256 of the certificate, for SPC version 3.
    private let bySHA256: [[UInt8]: ApplicationCredential]

    public init(_ credentials: [ApplicationCredential]) throws(FairPlayError) {
        var map: [[UInt8]: ApplicationCredential] = [:]
        for c in credentials {
            guard map[c.certificateHash] == nil else {
                throw FairPlayError(.invalidCertificate, "two credentials share certificate hash \(c.certificateHash.hexString)")
            }
            map[c.certificateHash] = c
        }
        byHash = map
        // Distinct SHA-1s mean distinct certificates, so their SHA-256s differ too: no second duplicate check.
        bySHA256 = Dictionary(map.values.map { ($0.certificateSHA256, $0) }, uniquingKeysWith: { first, _ in first })
    }

    public var all: [ApplicationCredential] { Array(byHash.values) }

    /// The credential for a certificate hash; nil when this server does not hold that certificate.
    public func credential(forCertificateHash hash: some Collection<UInt8>) -> ApplicationCredential? {
        byHash[Array(hash)]
    }

    /// The credential whose certificate has this SHA-256 (SPC version 3); nil when this server does not hold it.
    public func credential(forCertificateSHA256 hash: some Collection<UInt8>) -> ApplicationCredential? {
        bySHA256[Array(hash)]
    }
}

extension Collection where Element == UInt8 {
    /// Lower-case hex, two digits a byte.
    public var hexString: String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(count * 2)
        for b in self {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension Array where Element == UInt8 {
    /// Parses hex (upper or lower case, optional spaces); nil for anything else.
    public init?(hexString: some StringProtocol) {
        // On the UTF-8 bytes in place: through the generic view, every byte was a protocol witness call.
        guard let bytes = hexString.utf8.withContiguousStorageIfAvailable({ Self.parseHex($0) }) ?? Array(hexString.utf8).withUnsafeBufferPointer({ Self.parseHex($0) })
        else { return nil }
        self = bytes
    }

    private static func parseHex(_ utf8: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        // Room for every digit pair up front: a 16-byte key grew the array five times.
        out.reserveCapacity(utf8.count / 2)
        var high: UInt8?
        for c in utf8 {
            let v: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): v = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): v = c - UInt8(ascii: "A") + 10
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\t"), UInt8(ascii: "\r"): continue
            default: return nil
            }
            if let h = high {
                out.append(h << 4 | v)
                high = nil
            } else {
                high = v
            }
        }
        return high == nil ? out : nil
    }
}
