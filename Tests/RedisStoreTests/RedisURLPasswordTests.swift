import RedisStore
import Testing

/// Passwords in `redis://` and `redis-cluster://` URLs are read as RFC 3986 writes them, and an error
/// about one never shows it.
@Suite struct RedisURLPasswordTests {
    /// Every character a generated or typed password may hold that a URL treats specially.
    static let specials = Array("/?#%:@+[]!$&'()*,;= ")

    /// Passwords of base64 text with every special character at random places, the first holding each.
    static func generatedPasswords(count: Int = 24) -> [String] {
        var random = SystemRandomNumberGenerator()
        let base64 = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
        return (0..<count).map { index in
            var characters = (0..<20).map { _ in base64.randomElement(using: &random)! }
            for special in specials where index == 0 || Bool.random(using: &random) {
                characters.insert(special, at: Int.random(in: 0...characters.count, using: &random))
            }
            return String(characters)
        }
    }

    /// RFC 3986 percent-encoding of everything but unreserved characters.
    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(UnicodeScalar(byte))
            default:
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }

    /// The URL forms a password is given in: one server and a cluster, with and without a user.
    static func urls(password: String) -> [String] {
        [
            "redis://:\(password)@10.0.0.1:6379/0", "redis://ksm:\(password)@10.0.0.1:6379/0", "redis://\(password)@10.0.0.1",
            "redis-cluster://:\(password)@10.0.0.1:7000,10.0.0.2:7001", "redis-cluster://ksm:\(password)@10.0.0.1:7000,10.0.0.2:7001/0",
        ]
    }

    static func password(of endpoint: RedisEndpoint) -> String? {
        switch endpoint {
        case .single(let configuration): configuration.password
        case .cluster(let configuration): configuration.node.password
        }
    }

    @Test("A percent-encoded password holding any URL-special character is decoded whole, with and without a user, single and cluster")
    func percentEncodedPasswordsDecode() throws {
        for password in Self.generatedPasswords() {
            for url in Self.urls(password: Self.percentEncoded(password)) {
                let endpoint = try RedisEndpoint(url: url)
                #expect(Self.password(of: endpoint) == password, "\(url)")
                #expect(!endpoint.description.contains(password) && !endpoint.description.contains(Self.percentEncoded(password)))
            }
        }
        let cluster = try RedisClusterConfiguration(url: "redis-cluster://ksm:a%2Fb@10.0.0.1:7000,10.0.0.2:7001")
        #expect(cluster.seeds.count == 2 && cluster.node.username == "ksm" && cluster.node.password == "a/b")
    }

    @Test("A password written raw with a character RFC 3986 reserves is refused, and the error shows none of it")
    func rawReservedCharactersAreRefusedWithoutEcho() throws {
        for password in Self.generatedPasswords() where password.contains(where: { "/?#@[] ".contains($0) }) {
            for url in Self.urls(password: password) {
                do {
                    _ = try RedisEndpoint(url: url)
                    Issue.record("accepted \(url.count)-character URL with a raw reserved character")
                } catch {
                    let text = "\(error)"
                    #expect(!text.contains(password), "the error shows the password")
                    #expect(text.contains("percent-encoded"), "\(text)")
                }
            }
        }
    }

    @Test("A stray % and a query are refused; sub-delimiters and ':' in a password are taken as they are")
    func strayPercentQueryAndSubDelimiters() throws {
        #expect(throws: RedisError.self) { try RedisClientConfiguration(url: "redis://:ab%zz@h:1") }
        #expect(throws: RedisError.self) { try RedisClientConfiguration(url: "redis://:ab%4@h:1") }
        #expect(throws: RedisError.self) { try RedisClientConfiguration(url: "redis://h:1/0?timeout=5") }
        #expect(throws: RedisError.self) { try RedisClusterConfiguration(url: "redis-cluster://h:1,h:2#x") }
        let plain = try RedisClientConfiguration(url: "redis://u:a+b:c!$&'()*,;=d@h:1/2")
        #expect(plain.username == "u" && plain.password == "a+b:c!$&'()*,;=d" && plain.host == "h" && plain.port == 1 && plain.database == 2)
        #expect(try RedisClientConfiguration(url: "redis://:p%25w@[::1]:6380").password == "p%w")
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
