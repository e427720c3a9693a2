import KSMService
import KSMTestSupport
import Licensing
import Testing

@Suite("Reply encoding")
struct LicenseReplyEncodingTests {
    /// Replies with every optional field present or absent, odd text included.
    static func replies(count: Int) -> [LicenseReply] {
        var random = SplitMix64(state: 0x4E91)
        func maybe<T>(_ value: @autoclosure () -> T) -> T? { random.next() % 2 == 0 ? value() : nil }
        func bytes(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8.random(in: 0...255, using: &random) } }
        let texts = ["", "plain", "quote \" and \\ backslash", "line\nbreak\ttab\u{01}", "é😀/", "skd://live/stream-1"]
        let statuses: [KSMStatus] = [.ok, .overloaded, .storeUnavailable, .invalidJob, .deadlineExpired, .tooManyStreams, .rateLimited]
        return (0..<count).map { index in
            let status = statuses[index % statuses.count]
            return LicenseReply(
                id: texts[index % texts.count] + "\(index)", status: status, reason: texts[(index / 2) % texts.count],
                ckc: status == .ok ? bytes(Int(random.next() % 1_500)) : nil, leaseExpiresAt: maybe(Int64(random.next() % 1 << 45)),
                assetID: maybe(random.next() % 2 == 0 ? Array(texts[index % texts.count].utf8) : bytes(16)), hu: maybe(bytes(20)),
                tenant: maybe(texts[(index / 3) % texts.count]), account: maybe("acct-\(index)"), rule: texts[(index / 5) % texts.count],
                retryAfterMilliseconds: status.isRetriable ? Int64(random.next() % 2_000) : nil)
        }
    }

    @Test("writes the same bytes as the sorted JSON tree, for 2,000 replies with every field present or absent")
    func directWriterMatchesTree() {
        for reply in Self.replies(count: 2_000) {
            #expect(reply.jsonBytes() == reply.jsonValue.encoded(), "\(reply.id)")
        }
    }

    @Test("reads back what it writes")
    func roundTrip() throws {
        for reply in Self.replies(count: 500) {
            let back = try LicenseReply(json: reply.jsonBytes())
            #expect(back.id == reply.id && back.status == reply.status && back.reason == reply.reason && back.rule == reply.rule)
            #expect(back.ckc == reply.ckc && back.leaseExpiresAt == reply.leaseExpiresAt && back.hu == reply.hu)
            #expect(back.assetID == reply.assetID && back.tenant == reply.tenant && back.account == reply.account)
            #expect(back.retryAfterMilliseconds == reply.retryAfterMilliseconds)
        }
    }
}
