import KSMTestSupport
import RedisStore
import Testing

/// Passwords in `redis://` and `redis-cluster://` URLs are read as RFC 3986 writes them, and an error
/// about one never shows it.
@Suite struct RedisURLPasswordTests {
    /// Passwords with every special character (the first) or a random choice of them.
    static func generatedPasswords(count: Int = 24) -> [String] {
        (0..<count).map { GeneratedSecret.password(length: 20, everySpecial: $0 == 0) }
    }

    static func percentEncoded(_ text: String) -> String { GeneratedSecret.percentEncoded(text) }

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
