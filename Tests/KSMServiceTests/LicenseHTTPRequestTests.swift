import FairPlay
import FairPlayDevice
import Foundation
import KSMService
import KSMTestSupport
import Licensing
import Testing
import Wire

/// The edge's codec: each request shape from the bytes real clients send (docs/edge.md, "Request
/// shapes"), each answer's exact bytes, each refusal class, and malformed bodies.
@Suite("License HTTP request codec", .timeLimit(.minutes(2)))
struct LicenseHTTPRequestTests {
    /// A simulated device's SPC v2 whose base64 holds both `+` and `/`, so the form's `+` rule and
    /// the URL-safe alphabet are exercised by every test that sends it.
    static let spc: [UInt8] = {
        // Fixture files and a device are valid by construction; a failure here fails every test loudly.
        let device = SimulatedDevice(trust: try! Fixtures.setA.trust())
        var options = SPCOptions()
        options.assetID = Array("skd://twelve".utf8)
        while true {
            let spc = try! device.makeSPC(options).spc
            let text = Base64.encode(spc)
            if text.contains("+"), text.contains("/") { return spc }
        }
    }()
    static var spcBase64: String { Base64.encode(spc) }
    /// What the worker issues; the codec never looks inside.
    static let ckc: [UInt8] = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
    static var ckcBase64: String { Base64.encode(ckc) }
    /// The SPC's base64 cut to 4n+1 symbols: no padding can make it base64 again.
    static var truncatedBase64: String {
        var cut = spcBase64.replacingOccurrences(of: "=", with: "")
        while cut.count % 4 != 1 { cut.removeLast() }
        return cut
    }

    static func parse(_ body: String, _ contentType: String? = nil, query: [String: String] = [:]) throws -> LicenseHTTPRequest {
        try LicenseHTTPRequest.parse(body: Array(body.utf8), contentType: contentType, query: query)
    }

    /// The error `body` is refused with.
    static func refusal(_ body: [UInt8], _ contentType: String? = nil, query: [String: String] = [:], limit: Int? = nil) -> LicenseHTTPRequestError? {
        do {
            if let limit {
                _ = try LicenseHTTPRequest.parse(body: body, contentType: contentType, query: query, maximumBodySize: limit)
            } else {
                _ = try LicenseHTTPRequest.parse(body: body, contentType: contentType, query: query)
            }
            return nil
        } catch {
            return error
        }
    }

    static func refusal(_ body: String, _ contentType: String? = nil, query: [String: String] = [:]) -> LicenseHTTPRequestError? {
        refusal(Array(body.utf8), contentType, query: query)
    }

    /// JavaScript's `encodeURIComponent`: everything but `A-Z a-z 0-9 - _ . ! ~ * ' ( )` percent-encoded.
    static func encodeURIComponent(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)..<Unicode.Scalar(128)))
        allowed.insert(charactersIn: "-_.!~*'()")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    static func ok(leaseExpiresAt: Int64? = nil, nextKey: NextKeyAdvice? = nil) -> LicenseReply {
        var reply = LicenseReply(id: "r-1", status: .ok, reason: "issued", ckc: ckc, leaseExpiresAt: leaseExpiresAt, rule: "lease:granted")
        reply.nextKey = nextKey
        return reply
    }

    static func text(_ answer: LicenseHTTPAnswer) -> String { String(decoding: answer.body, as: UTF8.self) }

    // MARK: Shapes, from what clients send

    @Test("a raw SPC body (Apple's app samples post contentKeyRequestData as application/octet-stream) is the raw shape")
    func rawSPC() throws {
        let request = try LicenseHTTPRequest.parse(body: Self.spc, contentType: "application/octet-stream", query: [:])
        #expect(request == LicenseHTTPRequest(shape: .raw, spc: Self.spc))
    }

    @Test("a raw SPC with no Content-Type (Axinom's sample) or a wrong one is still the raw shape: the bytes decide")
    func rawSPCWithoutType() throws {
        for type in [nil, "application/x-www-form-urlencoded", "application/json"] {
            let request = try LicenseHTTPRequest.parse(body: Self.spc, contentType: type, query: [:])
            #expect(request.shape == .raw && request.spc == Self.spc)
        }
    }

    @Test("a base64 body is the base64 shape, with a final newline, wrapped at 76 columns, or URL-safe without padding")
    func base64Body() throws {
        let wrapped = stride(from: 0, to: Self.spcBase64.count, by: 76).map { start in
            let from = Self.spcBase64.index(Self.spcBase64.startIndex, offsetBy: start)
            return String(Self.spcBase64[from..<(Self.spcBase64.index(from, offsetBy: 76, limitedBy: Self.spcBase64.endIndex) ?? Self.spcBase64.endIndex)])
        }.joined(separator: "\r\n")
        let urlSafe = Self.spcBase64.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        for body in [Self.spcBase64, Self.spcBase64 + "\n", wrapped + "\n", urlSafe] {
            let request = try Self.parse(body, "text/plain")
            #expect(request == LicenseHTTPRequest(shape: .base64, spc: Self.spc))
        }
    }

    @Test("Apple's older Safari sample: spc=<base64, not URL-encoded, raw +>&assetId=<encodeURIComponent> is the form shape")
    func appleFormWithRawPlus() throws {
        #expect(Self.spcBase64.contains("+"))
        let body = "spc=" + Self.spcBase64 + "&assetId=" + Self.encodeURIComponent("twelve")
        let request = try Self.parse(body, "application/x-www-form-urlencoded")
        #expect(request == LicenseHTTPRequest(shape: .form, spc: Self.spc, assetID: "twelve"))
    }

    @Test("in the form's spc, %2B, a raw + and a space (a raw + a proxy decoded) all read as +")
    func formPlusSpellings() throws {
        for spelling in ["%2B", "+", " "] {
            let body = "spc=" + Self.spcBase64.replacingOccurrences(of: "+", with: spelling).replacingOccurrences(of: "/", with: "%2F")
            let request = try Self.parse(body, "application/x-www-form-urlencoded")
            #expect(request.spc == Self.spc, "\(spelling)")
        }
    }

    @Test("the form's assetId decodes + as a space and percent escapes as UTF-8, as form fields do")
    func formAssetIDDecoding() throws {
        let request = try Self.parse("assetId=a+b%C3%A9&spc=" + Self.encodeURIComponent(Self.spcBase64))
        #expect(request.assetID == "a bé" && request.spc == Self.spc)
    }

    @Test("Shaka's tutorial percent-encodes the whole spc=… string: a body starting spc%3D is decoded once and read as a form")
    func formFullyEncoded() throws {
        for body in [
            Self.encodeURIComponent("spc=" + Self.spcBase64), Self.encodeURIComponent("spc=" + Self.spcBase64).replacingOccurrences(of: "%3D", with: "%3d"),
        ] {
            #expect(body.hasPrefix("spc%3"))
            let request = try Self.parse(body, "application/x-www-form-urlencoded")
            #expect(request == LicenseHTTPRequest(shape: .form, spc: Self.spc))
        }
    }

    @Test("a form with spc after other fields (DRMtoday appends assetId and variantId), sent as text/html, is the form shape")
    func formFieldOrder() throws {
        let request = try Self.parse("assetId=movie-7&variantId=hd&spc=" + Self.encodeURIComponent(Self.spcBase64), "text/html; charset=utf-8")
        #expect(request == LicenseHTTPRequest(shape: .form, spc: Self.spc, assetID: "movie-7"))
    }

    @Test("ckc-format=tags asks for the form answer in <ckc> tags; it changes no other shape")
    func ckcTagsQuery() throws {
        let form = try Self.parse("spc=" + Self.spcBase64, query: ["ckc-format": "tags"])
        #expect(form.wantsCKCTags)
        #expect(try !Self.parse("spc=" + Self.spcBase64, query: ["ckc-format": "base64"]).wantsCKCTags)
        #expect(try !Self.parse(Self.spcBase64, query: ["ckc-format": "tags"]).wantsCKCTags)
    }

    @Test("JSON with spc, asset-id and priority is the json shape with all three")
    func jsonAllFields() throws {
        let body = #"{"spc": "\#(Self.spcBase64)", "asset-id": "skd://twelve", "priority": "continuity"}"#
        let request = try Self.parse(body, "application/json")
        #expect(request == LicenseHTTPRequest(shape: .json, spc: Self.spc, assetID: "skd://twelve", priority: .continuity))
    }

    @Test("JSON with only spc is the json shape with no asset ID and no priority; Eluvio's assetId is read as asset-id")
    func jsonMinimal() throws {
        #expect(try Self.parse(#"{"spc":"\#(Self.spcBase64)"}"#) == LicenseHTTPRequest(shape: .json, spc: Self.spc))
        let eluvio = try Self.parse(#"{"spc":"\#(Self.spcBase64)","assetId":"twelve"}"#, "application/json")
        #expect(eluvio == LicenseHTTPRequest(shape: .json, spc: Self.spc, assetID: "twelve"))
        let prefetch = try Self.parse("\u{FEFF}\n {\"priority\":\"prefetch\",\"spc\":\"\(Self.spcBase64)\",\"asset-id\":null}\n")
        #expect(prefetch == LicenseHTTPRequest(shape: .json, spc: Self.spc, priority: .prefetch))
    }

    @Test("Apple's fps_safari_support.js body, JSON sent as application/x-www-form-urlencoded, is the apple shape")
    func appleSafariJSON() throws {
        // JSON.stringify's output for the sample's object: compact, members in the order written.
        let body = #"{"fairplay-streaming-request":{"version":1,"streaming-keys":[{"id":1,"uri":"skd://twelve","spc":"\#(Self.spcBase64)"}]}}"#
        let request = try Self.parse(body, "application/x-www-form-urlencoded")
        #expect(request == LicenseHTTPRequest(shape: .apple, spc: Self.spc, assetID: "skd://twelve", streamingKeyID: .integer(1)))
    }

    @Test("Apple's renewal sample sends no uri; a string id is kept as a string")
    func appleWithoutURI() throws {
        let body = #"{"fairplay-streaming-request":{"version":1,"streaming-keys":[{"id":"k-1","spc":"\#(Self.spcBase64)"}]}}"#
        let request = try Self.parse(body, "application/x-www-form-urlencoded")
        #expect(request == LicenseHTTPRequest(shape: .apple, spc: Self.spc, streamingKeyID: .string("k-1")))
    }

    @Test("SPC versions 1 and 3 are recognised raw and in base64 as well as version 2")
    func otherVersions() throws {
        let trust = try Fixtures.setA.trust()
        let device = SimulatedDevice(trust: trust)
        var v3 = SPCOptions()
        v3.spcVersion = 3
        let spc3 = try device.makeSPC(v3).spc
        #expect(try LicenseHTTPRequest.parse(body: spc3, contentType: nil, query: [:]).shape == .raw)
        #expect(try Self.parse(Base64.encode(spc3)).spc == spc3)
        var v1 = Array(Self.spc)
        v1[3] = 1
        #expect(try LicenseHTTPRequest.parse(body: v1, contentType: nil, query: [:]).spc == v1)
    }

    @Test("a form whose base64 ends in + keeps it when a proxy decoded it to a trailing space")
    func trailingPlusDecodedToASpace() throws {
        // Base64 ends in `+` when the byte count is a multiple of 3 and the last 6 bits are 62.
        var spc = Array(Self.spc)
        while spc.count % 3 != 0 { spc.append(0) }
        spc[spc.count - 1] = (spc[spc.count - 1] & 0xC0) | 0x3E
        let text = Base64.encode(spc)
        try #require(text.hasSuffix("+"))
        let spaced = "spc=" + text.replacingOccurrences(of: "+", with: " ")
        #expect(try Self.parse(spaced).spc == spc)
        #expect(try Self.parse(spaced + "\n").spc == spc)
        #expect(try Self.parse("spc=" + text + "\r\n").spc == spc)
    }

    @Test("20 device SPCs of each version come back unchanged from every shape and every spelling of it")
    func everySpellingRoundTrips() throws {
        let device = SimulatedDevice(trust: try Fixtures.setA.trust())
        for round in 0..<20 {
            var options = SPCOptions()
            options.spcVersion = UInt32(2 + round % 2)
            options.assetID = Array("skd://asset-\(round)".utf8)
            let spc = try device.makeSPC(options).spc
            let text = Base64.encode(spc)
            let urlSafe = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            let bodies: [(String, LicenseHTTPRequest.Shape)] = [
                (text, .base64), (urlSafe + "\n", .base64), ("spc=" + text, .form), ("spc=" + text.replacingOccurrences(of: "+", with: " "), .form),
                ("spc=" + Self.encodeURIComponent(text) + "&assetId=a", .form), (Self.encodeURIComponent("spc=" + text), .form),
                (#"{"spc":"\#(urlSafe)"}"#, .json), (#"{"fairplay-streaming-request":{"streaming-keys":[{"spc":"\#(text)"}]}}"#, .apple),
            ]
            for (body, shape) in bodies {
                let request = try Self.parse(body)
                #expect(request.shape == shape && request.spc == spc, "\(shape) round \(round)")
            }
            #expect(try LicenseHTTPRequest.parse(body: spc, contentType: nil, query: [:]).spc == spc)
        }
    }

    // MARK: Answers

    @Test("raw is answered with the CKC's bytes, application/octet-stream, no-store")
    func rawAnswer() {
        let answer = LicenseHTTPRequest(shape: .raw, spc: Self.spc).answer(to: Self.ok())
        #expect(
            answer
                == LicenseHTTPAnswer(
                    status: 200, contentType: "application/octet-stream", headers: [.init(name: "Cache-Control", value: "no-store")], body: Self.ckc))
    }

    @Test("base64 and form are answered with padded standard base64, text/plain; the form in <ckc> tags when asked")
    func textAnswers() {
        let base64 = LicenseHTTPRequest(shape: .base64, spc: Self.spc).answer(to: Self.ok())
        #expect(base64.status == 200 && base64.contentType == "text/plain; charset=us-ascii" && Self.text(base64) == Self.ckcBase64)
        #expect(Self.text(LicenseHTTPRequest(shape: .form, spc: Self.spc).answer(to: Self.ok())) == Self.ckcBase64)
        let tagged = LicenseHTTPRequest(shape: .form, spc: Self.spc, wantsCKCTags: true).answer(to: Self.ok())
        #expect(tagged.contentType == "text/plain; charset=us-ascii" && Self.text(tagged) == "<ckc>\(Self.ckcBase64)</ckc>")
        // A stray flag on another shape wraps nothing.
        #expect(Self.text(LicenseHTTPRequest(shape: .base64, spc: Self.spc, wantsCKCTags: true).answer(to: Self.ok())) == Self.ckcBase64)
    }

    @Test("json is answered with ckc, lease-expires-at and next-key when the reply has them, application/json")
    func jsonAnswer() {
        let request = LicenseHTTPRequest(shape: .json, spc: Self.spc)
        let full = request.answer(
            to: Self.ok(
                leaseExpiresAt: 1_700_000_600_000, nextKey: NextKeyAdvice(boundaryMilliseconds: 1_700_000_060_000, fetchAtMilliseconds: 1_700_000_050_000)))
        #expect(full.status == 200 && full.contentType == "application/json")
        #expect(
            Self.text(full) == #"{"ckc":"\#(Self.ckcBase64)","lease-expires-at":1700000600000,"next-key":{"boundary":1700000060000,"fetch-at":1700000050000}}"#)
        #expect(Self.text(request.answer(to: Self.ok())) == #"{"ckc":"\#(Self.ckcBase64)"}"#)
    }

    @Test("apple is answered with fairplay-streaming-response, the id echoed as sent (number or string)")
    func appleAnswer() {
        let numbered = LicenseHTTPRequest(shape: .apple, spc: Self.spc, streamingKeyID: .integer(1)).answer(to: Self.ok(leaseExpiresAt: 5))
        #expect(numbered.status == 200 && numbered.contentType == "application/json")
        #expect(Self.text(numbered) == #"{"fairplay-streaming-response":{"streaming-keys":[{"ckc":"\#(Self.ckcBase64)","id":1}]}}"#)
        let named = LicenseHTTPRequest(shape: .apple, spc: Self.spc, streamingKeyID: .string("k-1")).answer(to: Self.ok())
        #expect(Self.text(named) == #"{"fairplay-streaming-response":{"streaming-keys":[{"ckc":"\#(Self.ckcBase64)","id":"k-1"}]}}"#)
    }

    // MARK: Refusals

    @Test("a lease refusal is 403 with Apple-style status and reason: JSON for the JSON shapes, one text line for the others")
    func policyRefusal() {
        let reply = LicenseReply(id: "r-1", status: .tooManyStreams, reason: "account holds 2 of 2 streams", rule: "lease:too-many-streams")
        let json = LicenseHTTPRequest(shape: .json, spc: Self.spc).answer(to: reply)
        #expect(json.status == 403 && json.contentType == "application/json")
        #expect(Self.text(json) == #"{"error":{"reason":"account holds 2 of 2 streams","status":-43004,"status-name":"tooManyStreams"}}"#)
        let apple = LicenseHTTPRequest(shape: .apple, spc: Self.spc, streamingKeyID: .integer(1)).answer(to: reply)
        #expect(
            Self.text(apple)
                == #"{"error":{"reason":"account holds 2 of 2 streams","status":-43004,"status-name":"tooManyStreams"},"fairplay-streaming-response":{"streaming-keys":[{"id":1,"status":-43004}]}}"#
        )
        for shape in [LicenseHTTPRequest.Shape.raw, .base64, .form] {
            let answer = LicenseHTTPRequest(shape: shape, spc: Self.spc).answer(to: reply)
            #expect(answer.status == 403 && answer.contentType == "text/plain; charset=utf-8")
            #expect(Self.text(answer) == "status -43004: account holds 2 of 2 streams")
            #expect(answer.header("cache-control") == "no-store" && answer.header("Retry-After") == nil)
        }
    }

    @Test("every retriable refusal, and a deadline passed in the queue, is 503 with Retry-After rounded up to whole seconds, at least 1")
    func retriableRefusals() {
        let request = LicenseHTTPRequest(shape: .raw, spc: Self.spc)
        let cases: [(KSMStatus, Int64?, Int)] = [
            (.overloaded, 1_500, 2), (.storeUnavailable, 1_000, 1), (.rateLimited, 1, 1), (.rateLimited, 59_001, 60), (.deadlineExpired, nil, 1),
            (.overloaded, 0, 1), (.overloaded, Int64.max, Int(Int64.max / 1000 + 1)),
        ]
        for (status, milliseconds, seconds) in cases {
            let reply = LicenseReply(id: "r", status: status, reason: "busy", rule: "r", retryAfterMilliseconds: milliseconds)
            let answer = request.answer(to: reply)
            #expect(answer.status == 503, "\(status)")
            #expect(answer.retryAfterSeconds == seconds, "\(status) \(String(describing: milliseconds))")
        }
    }

    @Test("refusal classes: malformed SPC or job 400, policy, token and security level 403, unknown tenant and missing key 404, server faults 5xx")
    func refusalClasses() {
        let expected: [(KSMStatus, Int)] = [
            (KSMStatus(.parserError), 400), (KSMStatus(.spcVersionError), 400), (KSMStatus(.integrityError), 400), (KSMStatus(.invalidCertificate), 400),
            (.invalidJob, 400), (.tokenExpired, 403), (.tokenMissing, 403), (.tokenBadSignature, 403), (.airPlayDenied, 403), (.deviceLimitReached, 403),
            (.leaseRenewalNotAllowed, 403), (.streamEnded, 403), (.rentalExpired, 403), (.replayedSPC, 403), (KSMStatus(.clientSecurityLevel), 403),
            (.certificateNotOwnedByTenant, 403), (.syncChallengeMismatch, 403), (.unknownTenant, 404), (.noContentKey, 404), (.jobIdReused, 409),
            (KSMStatus(.internalError), 500), (.keyUnwrapFailed, 500), (.noPolicy, 500), (.invalidPolicy, 500), (.replyTopicRefused, 500),
            (KSMStatus(.notImplemented), 501), (KSMStatus(rawValue: -43998), 500),
        ]
        for (status, http) in expected {
            #expect(LicenseHTTPRequest.httpStatus(for: status) == http, "\(status)")
        }
        for status in KSMStatus.allKnown where status != .ok {
            #expect(LicenseHTTPRequest.httpStatus(for: status) >= 400, "\(status)")
            #expect((LicenseHTTPRequest.httpStatus(for: status) == 503) == (status.isRetriable || status == .deadlineExpired), "\(status)")
        }
    }

    @Test("a refusal carries no CKC even when the reply has one, and a success without a CKC is a 502")
    func noStrayCKC() {
        let refused = LicenseReply(id: "r", status: .tooManyStreams, reason: "full", ckc: Self.ckc, rule: "lease:too-many-streams")
        for shape in LicenseHTTPRequest.Shape.allCases {
            let answer = LicenseHTTPRequest(shape: shape, spc: Self.spc).answer(to: refused)
            #expect(!Self.text(answer).contains(String(Self.ckcBase64.prefix(16))) && !answer.body.starts(with: Self.ckc.prefix(16)))
        }
        let empty = LicenseReply(id: "r", status: .ok, reason: "check-in", rule: "sync")
        #expect(LicenseHTTPRequest(shape: .json, spc: Self.spc).answer(to: empty).status == 502)
    }

    @Test("a reason with line breaks is one line in a text answer")
    func reasonIsOneLine() {
        let reply = LicenseReply(id: "r", status: .noPolicy, reason: "no policy\r\nfor asset", rule: "policy")
        #expect(Self.text(LicenseHTTPRequest(shape: .form, spc: Self.spc).answer(to: reply)) == "status -43009: no policy  for asset")
    }

    @Test("past the deadline is 504 with Retry-After; at the in-flight bound or without Kafka 503 with Retry-After, at least 1 s")
    func timeoutAndUnavailable() {
        let json = LicenseHTTPRequest(shape: .json, spc: Self.spc)
        let timeout = json.timeoutAnswer(retryAfterSeconds: 3)
        #expect(timeout.status == 504 && timeout.retryAfterSeconds == 3)
        #expect(
            Self.text(timeout) == #"{"error":{"reason":"no answer from the key servers before the deadline","status":-43005,"status-name":"deadlineExpired"}}"#)
        let unavailable = LicenseHTTPRequest(shape: .raw, spc: Self.spc).unavailableAnswer(reason: "Kafka is unavailable", retryAfterSeconds: 0)
        #expect(unavailable.status == 503 && unavailable.retryAfterSeconds == 1 && unavailable.contentType == "text/plain; charset=utf-8")
        #expect(Self.text(unavailable) == "status -43031: Kafka is unavailable")
        #expect(unavailable.headers == [.init(name: "Cache-Control", value: "no-store"), .init(name: "Retry-After", value: "1")])
    }

    // MARK: Malformed requests

    @Test("an empty or all-white-space body is 400")
    func emptyBody() {
        #expect(Self.refusal([UInt8]())?.status == 400)
        #expect(Self.refusal([UInt8]())?.message.contains("empty body") == true)
        #expect(Self.refusal(" \r\n")?.status == 400)
    }

    @Test("truncated base64 (a length of 4n+1) is 400 naming base64, in the base64, form and JSON shapes")
    func truncatedBase64() {
        let cut = Self.truncatedBase64
        let bodies: [(String, LicenseHTTPRequest.Shape)] = [(cut, .base64), ("spc=" + cut, .form), (#"{"spc":"\#(cut)"}"#, .json)]
        for (body, shape) in bodies {
            let error = Self.refusal(body)
            #expect(error?.status == 400 && error?.shape == shape && error?.message.contains("not valid base64") == true, "\(shape)")
        }
    }

    @Test("base64 that decodes to something other than an SPC (a DER certificate) is 400 spcVersionErr; so is a raw body of another version")
    func notAnSPC() throws {
        let certificate = try Fixtures.project("Fixtures/test-credentials/test_certificate.der")
        let error = Self.refusal(Base64.encode(certificate))
        #expect(error?.status == 400 && error?.code == KSMStatus(.spcVersionError) && error?.message.contains("not an SPC") == true)
        let raw = Self.refusal([0, 0, 0, 7] + Array(Self.spc.dropFirst(4)))
        #expect(raw?.status == 400 && raw?.code == KSMStatus(.spcVersionError) && raw?.shape == .raw)
        #expect(Self.refusal([0, 0, 0, 2, 0])?.message.contains("shorter than the 8 bytes") == true)
    }

    @Test("JSON without spc, with a non-string spc, or not valid JSON is 400")
    func jsonWithoutSPC() {
        #expect(Self.refusal(#"{"asset-id":"skd://twelve"}"#)?.message.contains("neither \"spc\" nor \"fairplay-streaming-request\"") == true)
        #expect(Self.refusal(#"{"spc":17}"#)?.message == "\"spc\" must be a string of base64, not integer")
        #expect(Self.refusal(#"{"spc":"AAAA""#)?.message.contains("not valid JSON") == true)
        #expect(Self.refusal(#"{"spc":"\#(Self.spcBase64)","priority":"urgent"}"#)?.message.contains("\"priority\" must be") == true)
        #expect(Self.refusal(#"{"spc":"\#(Self.spcBase64)","asset-id":"a","assetId":"b"}"#)?.message.contains("both") == true)
        for error in [Self.refusal(#"{"asset-id":"x"}"#), Self.refusal(#"{"spc":17}"#)] { #expect(error?.status == 400 && error?.shape == .json) }
    }

    @Test("two streaming keys (or none) are refused: exactly one per request is supported")
    func twoStreamingKeys() {
        let key = #"{"id":1,"spc":"\#(Self.spcBase64)"}"#
        let two = Self.refusal(#"{"fairplay-streaming-request":{"version":1,"streaming-keys":[\#(key),\#(key)]}}"#, "application/x-www-form-urlencoded")
        #expect(two?.status == 400 && two?.shape == .apple)
        #expect(two?.message == "exactly one streaming key per request is supported; this request has 2")
        #expect(Self.refusal(#"{"fairplay-streaming-request":{"streaming-keys":[]}}"#)?.message.hasSuffix("this request has 0") == true)
        #expect(Self.refusal(#"{"fairplay-streaming-request":{"version":2,"streaming-keys":[\#(key)]}}"#)?.message.contains("must be 1") == true)
        #expect(Self.refusal(#"{"fairplay-streaming-request":{"streaming-keys":[{"id":true,"spc":"AAAA"}]}}"#)?.message.contains("number or a string") == true)
    }

    @Test("Apple's back-office create-ckc request, where the caller supplies the content key, is refused by name")
    func createCKCRefused() {
        let body = #"""
            { "fairplay-streaming-request": { "version": 1, "create-ckc": [ { "id": 1, "spc": "\#(Self.spcBase64)",
              "asset-info": [ { "content-key": "3C3C3C3C3C3C3C3C3C3C3C3C3C3C3C3C", "content-iv": "D5FBD6B82ED93E4EF98AE40931EE33B7" } ] } ] } }
            """#
        let error = Self.refusal(body, "application/json")
        #expect(error?.status == 400 && error?.shape == .apple)
        #expect(error?.message.contains("\"create-ckc\" is Apple's back-office KSM interface") == true)
        #expect(error?.message.contains("3C3C") == false)
    }

    @Test("garbage (HTML, a PNG header) matches no shape: 415 with Accept, the declared Content-Type named")
    func garbage() {
        let html = Self.refusal("<html><body>hello</body></html>", "application/octet-stream")
        #expect(html?.status == 415 && html?.shape == nil)
        #expect(html?.message.hasSuffix("; the bytes decide, not the Content-Type (application/octet-stream)") == true)
        let png = Self.refusal([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00])
        #expect(png?.status == 415)
        let answer = html?.answer()
        #expect(answer?.status == 415 && answer?.contentType == "text/plain; charset=utf-8" && answer?.header("Accept")?.contains("application/json") == true)
    }

    @Test("a body over the limit is 413 before it is read; an SPC over 64 KiB is 413 too")
    func tooLarge() {
        let error = Self.refusal(Array(Self.spcBase64.utf8), limit: 100)
        #expect(
            error?.status == 413 && error?.code == KSMStatus(.memoryError)
                && error?.message == "body of \(Self.spcBase64.utf8.count) bytes exceeds the 100-byte limit")
        let big = [0, 0, 0, 2] + [UInt8](repeating: 0, count: SPCContainer.maximumSize)
        #expect(Self.refusal(big)?.status == 413)
        #expect(Self.refusal(Base64.encode(big))?.status == 413)
        #expect(Self.refusal([UInt8](repeating: 0x41, count: LicenseHTTPRequest.maximumBodySize + 1))?.status == 413)
    }

    @Test("form errors: no spc field, two spc fields, a malformed % escape, an unknown ckc-format")
    func formErrors() {
        #expect(Self.refusal("assetId=twelve")?.message == "the form has no spc field")
        #expect(Self.refusal("spc=\(Self.spcBase64)&spc=\(Self.spcBase64)")?.message == "the form has more than one spc field")
        #expect(Self.refusal("spc=AA%zzAA")?.message == "the form's spc field has a malformed % escape")
        #expect(Self.refusal("spc%3DAA%2")?.message == "the percent-encoded form body has a malformed % escape")
        #expect(Self.refusal("spc=", query: [:])?.message == "the form's spc field is empty")
        #expect(Self.refusal("spc=" + Self.spcBase64, query: ["ckc-format": "xml"])?.status == 400)
    }

    @Test("no refusal message quotes the SPC, whatever went wrong")
    func messagesNeverQuoteTheSPC() {
        let fragment = String(Self.spcBase64.dropFirst(40).prefix(16))
        let bodies = [
            "spc=\(Self.spcBase64)&spc=\(Self.spcBase64)", #"{"spc":"\#(Self.spcBase64)","priority":"x"}"#, "spc=\(Self.spcBase64)%", Self.spcBase64 + "!",
            #"{"fairplay-streaming-request":{"streaming-keys":[{"spc":"\#(Self.spcBase64)"},{}]}}"#, Self.truncatedBase64,
        ]
        for body in bodies {
            let error = Self.refusal(body)
            #expect(error != nil && error?.message.contains(fragment) == false && error.map { Self.text($0.answer()) }?.contains(fragment) == false)
        }
    }

    @Test("a request error is answered in its shape's form: JSON for json and apple, text otherwise")
    func requestErrorAnswers() {
        let json = Self.refusal(#"{"spc":17}"#)?.answer()
        #expect(json?.status == 400 && json?.contentType == "application/json")
        #expect(json.map(Self.text) == #"{"error":{"reason":"\"spc\" must be a string of base64, not integer","status":-42585,"status-name":"paramErr"}}"#)
        let form = Self.refusal("assetId=twelve")?.answer()
        #expect(form.map(Self.text) == "status -42585: the form has no spc field")
    }

    @Test("every shape's raw, base64, form and JSON spellings of 200 random byte strings either parse or throw, never trap")
    func randomBodies() {
        var random = SplitMix64(state: 0xED6E)
        let alphabet = Array("spc=%3D&+/_-{}[]\":,0123456789ABCabc \n".utf8)
        for round in 0..<200 {
            let length = Int(random.next() % 200)
            let body: [UInt8] = (0..<length).map { _ in
                round % 2 == 0 ? alphabet[Int(random.next() % UInt64(alphabet.count))] : UInt8(truncatingIfNeeded: random.next())
            }
            _ = Self.refusal(body)
        }
    }
}
