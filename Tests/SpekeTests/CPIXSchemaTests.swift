import Foundation
import KSMTestSupport
import Speke
import Testing
import Wire

/// Every CPIX document the writer produces, checked by tools that share no code with ours
/// (``CPIXSchemaCheck``): the DASH-IF CPIX 2.3 XML Schema, and the reader of the PyPI package
/// `cpix`, whose reading must give back the keys, IVs and signaling the writer put in.
///
/// Needs `python3` with `lxml` and `cpix` (scripts/install-deps.sh); without them the tests fail
/// and say what is missing.
@Suite(.timeLimit(.minutes(3))) struct CPIXSchemaTests {
    /// How a rotating request names its key periods. MediaPackage's `ContentKeyPeriodTiming`:
    /// `INDEX_ONLY` (SPEKE v2.0 and v2.1), `START_END_ONLY` and `INDEX_WITH_START_END` (v2.1).
    enum PeriodTiming: String, CaseIterable, Sendable {
        case indexOnly, startEndOnly, indexWithStartEnd

        var version: SpekeVersion { self == .indexOnly ? .v2_0 : .v2_1 }
    }

    static let periodCount = 3

    static func videoKID(_ period: Int) -> String { "6b1c0e10-3f6a-4d7e-9a10-00000000010\(period)" }
    static func audioKID(_ period: Int) -> String { "6b1c0e10-3f6a-4d7e-9a10-00000000020\(period)" }
    static func periodID(_ period: Int) -> String { "keyPeriod_6b1c0e10-\(period)" }

    /// A live rotating request as MediaPackage sends it: one video and one audio key per period,
    /// each rule filtered on its period and on its track, the first key with an `explicitIV`, the
    /// video keys asking for `URIExtXKey` too, and the empty `PSSH` AWS's requests carry.
    static func rotatingRequest(_ timing: PeriodTiming) -> String {
        var keys = ""
        var systems = ""
        var periods = ""
        var rules = ""
        let fairPlay = CPIXDocuments.fairPlaySystemID
        for period in 0..<periodCount {
            let iv = period == 0 ? #" explicitIV="OFj2IjCsPJFfMAxmQxLGPw==""# : ""
            keys += #"<cpix:ContentKey kid="\#(videoKID(period))" commonEncryptionScheme="cbcs"\#(iv)/>"#
            keys += #"<cpix:ContentKey kid="\#(audioKID(period))" commonEncryptionScheme="cbcs"/>"#
            systems += #"""
                <cpix:DRMSystem kid="\#(videoKID(period))" systemId="\#(fairPlay)"><cpix:PSSH/><cpix:URIExtXKey/><cpix:HLSSignalingData playlist="media"/><cpix:HLSSignalingData playlist="master"/></cpix:DRMSystem>
                <cpix:DRMSystem kid="\#(audioKID(period))" systemId="\#(fairPlay)"><cpix:HLSSignalingData playlist="media"/><cpix:HLSSignalingData playlist="master"/></cpix:DRMSystem>
                """#
            let start = "2026-11-28T12:00:\(String(format: "%02d", period * 10))Z"
            let end = "2026-11-28T12:00:\(String(format: "%02d", period * 10 + 10))Z"
            let timingAttributes =
                switch timing {
                case .indexOnly: #"index="\#(1000 + period)""#
                case .startEndOnly: #"start="\#(start)" end="\#(end)""#
                case .indexWithStartEnd: #"index="\#(1000 + period)" start="\#(start)" end="\#(end)""#
                }
            periods += #"<cpix:ContentKeyPeriod id="\#(periodID(period))" \#(timingAttributes)/>"#
            rules += #"""
                <cpix:ContentKeyUsageRule kid="\#(videoKID(period))" intendedTrackType="VIDEO"><cpix:KeyPeriodFilter periodId="\#(periodID(period))"/><cpix:VideoFilter minPixels="0" maxPixels="8847360" hdr="false" minFps="1" maxFps="60"/></cpix:ContentKeyUsageRule>
                <cpix:ContentKeyUsageRule kid="\#(audioKID(period))" intendedTrackType="AUDIO"><cpix:KeyPeriodFilter periodId="\#(periodID(period))"/><cpix:AudioFilter minChannels="1" maxChannels="8"/></cpix:ContentKeyUsageRule>
                """#
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <cpix:CPIX contentId="live-channel-7" version="\(timing.version.cpixVersion)" xmlns:cpix="urn:dashif:org:cpix" xmlns:pskc="urn:ietf:params:xml:ns:keyprov:pskc">
            <cpix:ContentKeyList>\(keys)</cpix:ContentKeyList>
            <cpix:DRMSystemList>\(systems)</cpix:DRMSystemList>
            <cpix:ContentKeyPeriodList>\(periods)</cpix:ContentKeyPeriodList>
            <cpix:ContentKeyUsageRuleList>\(rules)</cpix:ContentKeyUsageRuleList>
            </cpix:CPIX>
            """
    }

    /// The request's answer; keys from `SpekeResponseWriterTests.issued`.
    static func answer(_ text: String, version: SpekeVersion) throws -> (SpekeRequest, [KID: IssuedKey], SpekeResponse) {
        let request = try SpekeRequest(body: Array(text.utf8), spekeVersionHeader: version.rawValue)
        let keys = try SpekeResponseWriterTests.issued(for: request)
        return (request, keys, try SpekeResponseWriter.response(for: request, keys: keys))
    }

    static func check(_ documents: [(name: String, bytes: [UInt8])]) async throws -> [String: CPIXSchemaCheck.Report] {
        let reports = try await CPIXSchemaCheck.check(documents)
        try #require(reports.count == documents.count)
        return reports
    }

    /// What the independent reader read from `response` is what the writer put in for `request`:
    /// each KID once in request order with its scheme, IV and key (or a 48-byte encrypted key and
    /// a 64-byte MAC), each DRM system's signaling, the periods and the contract.
    static func expectReadBack(
        _ report: CPIXSchemaCheck.Report?, request: SpekeRequest, keys: [KID: IssuedKey], encrypted: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let read = try #require(report?.read, "the reader read nothing: \(report?.problems ?? [])", sourceLocation: sourceLocation)
        #expect(read.contentKeys.map(\.kid) == request.contentKeys.map { $0.kid.description }, sourceLocation: sourceLocation)
        for (requested, readKey) in zip(request.contentKeys, read.contentKeys) {
            let issued = try #require(keys[requested.kid], sourceLocation: sourceLocation)
            #expect(readKey.commonEncryptionScheme == requested.commonEncryptionScheme, sourceLocation: sourceLocation)
            #expect(readKey.explicitIV == issued.iv, sourceLocation: sourceLocation)
            if encrypted {
                #expect(readKey.plainValue == nil, sourceLocation: sourceLocation)
                #expect(readKey.cipherValue?.count == 48 && readKey.valueMAC?.count == 64, sourceLocation: sourceLocation)
            } else {
                #expect(readKey.plainValue == issued.key, sourceLocation: sourceLocation)
                #expect(readKey.cipherValue == nil && readKey.valueMAC == nil, sourceLocation: sourceLocation)
            }
        }
        #expect(read.drmSystems.map(\.kid) == request.drmSystems.map { $0.kid.description }, sourceLocation: sourceLocation)
        for (requested, system) in zip(request.drmSystems, read.drmSystems) {
            let uri = try #require(keys[requested.kid]?.skdURI, sourceLocation: sourceLocation)
            #expect(system.systemID == CPIXDocuments.fairPlaySystemID, sourceLocation: sourceLocation)
            #expect(system.mediaSignaling == HLSSignaling.tag(for: .media, skdURI: uri), sourceLocation: sourceLocation)
            #expect(system.masterSignaling == HLSSignaling.tag(for: .master, skdURI: uri), sourceLocation: sourceLocation)
        }
        #expect(read.periodIDs == request.periods.map(\.id), sourceLocation: sourceLocation)
        #expect(read.usageRules.map(\.kid) == request.usageRules.map { $0.kid.description }, sourceLocation: sourceLocation)
        #expect(read.usageRules.map(\.intendedTrackType) == request.usageRules.map(\.intendedTrackType), sourceLocation: sourceLocation)
        let filters = request.usageRules.map {
            Array(repeating: "KeyPeriodFilter", count: $0.periodIDs.count) + $0.videoFilters.map { _ in "VideoFilter" }
                + $0.audioFilters.map { _ in "AudioFilter" }
        }
        #expect(read.usageRules.map(\.filters) == filters, sourceLocation: sourceLocation)
        #expect(read.deliveryDataCount == request.deliveryRecipients.count, sourceLocation: sourceLocation)
    }

    /// AWS's FairPlay verification request, as a request: valid CPIX 2.3, and read as asking for
    /// two keys with no values. The package's own CPIX 2.2 schema refuses it (its `KeyPeriodFilter`
    /// repeats the period's ID), which is why the check derives the CPIX 2.3 schema.
    @Test func awsVerificationRequestIsValidCPIX23() async throws {
        let reports = try await Self.check([("request", Array(CPIXDocuments.awsFairPlayRequest.utf8))])
        let report = try #require(reports["request"])
        #expect(report.isValid, "\(report.problems)")
        #expect(!report.validAgainstPackagedCPIX22)
        let read = try #require(report.read)
        #expect(read.contentKeys.map(\.kid) == [CPIXDocuments.videoKID, CPIXDocuments.audioKID])
        #expect(read.contentKeys.allSatisfy { $0.plainValue == nil && $0.cipherValue == nil && $0.explicitIV == nil })
        #expect(read.periodIDs == ["keyPeriod_2e19ac38-22d3-4bb2-b290-95a72f4732ef"])
    }

    @Test func answerToAWSsVerificationRequestIsValid() async throws {
        let (request, keys, response) = try Self.answer(CPIXDocuments.awsFairPlayRequest, version: .v2_0)
        let report = try #require(try await Self.check([("answer", response.body)])["answer"])
        #expect(report.isValid, "\(report.problems)")
        try Self.expectReadBack(report, request: request, keys: keys)
    }

    /// A rotating request with three periods and a video and an audio key in each, in the three
    /// ways MediaPackage names periods. Every answer is valid against the schema. The reader reads
    /// all but the one whose periods carry both an index and start/end times: CPIX 2.3 makes
    /// `index` "mutually exclusive" with `start` and `end`, and the reader holds to that, while the
    /// XSD does not express it and SPEKE v2.1 (`INDEX_WITH_START_END`) sends both. The answer
    /// repeats the request's periods unchanged, as SPEKE requires.
    @Test(arguments: PeriodTiming.allCases)
    func answersToRotatingRequestsAreValid(_ timing: PeriodTiming) async throws {
        let text = Self.rotatingRequest(timing)
        let (request, keys, response) = try Self.answer(text, version: timing.version)
        #expect(request.contentKeys.count == 2 * Self.periodCount && request.periods.count == Self.periodCount)
        let reports = try await Self.check([("request", Array(text.utf8)), ("answer", response.body)])
        for name in ["request", "answer"] {
            let report = try #require(reports[name])
            #expect(!report.problems.contains { $0.hasPrefix("schema") }, "\(name): \(report.problems)")
            switch timing {
            case .indexOnly, .startEndOnly:
                #expect(report.isValid, "\(name): \(report.problems)")
            case .indexWithStartEnd:
                #expect(report.problems.count == 1 && report.problems.allSatisfy { $0.hasPrefix("reader:") && $0.contains("mutually exclusive") })
            }
        }
        if timing != .indexWithStartEnd {
            try Self.expectReadBack(reports["answer"], request: request, keys: keys)
        }
    }

    /// The encrypted answer (`DeliveryDataList`, encrypted keys with their MACs) is valid and the
    /// reader reads the writer's cipher values. AWS's request shape is not: its `DeliveryData`
    /// holds a `DeliveryKey` only, and the schema requires a `DocumentKey` after it.
    @Test(.enabled(if: PackagerCertificate.openssl != nil, "openssl is not installed"))
    func encryptedAnswerIsValid() async throws {
        let certificate = try await PackagerCertificate.make()
        defer { try? FileManager.default.removeItem(at: certificate.directory) }
        let text = CPIXDocuments.awsFairPlayRequest.replacingOccurrences(
            of: "<cpix:ContentKeyList>", with: certificate.deliveryDataList + "<cpix:ContentKeyList>"
        ).replacingOccurrences(of: #"xmlns:pskc="#, with: #"xmlns:ds="http://www.w3.org/2000/09/xmldsig#" xmlns:pskc="#)
        let (request, keys, response) = try Self.answer(text, version: .v2_0)
        #expect(request.deliveryRecipients.count == 1)
        let reports = try await Self.check([("request", Array(text.utf8)), ("answer", response.body)])

        let answer = try #require(reports["answer"])
        #expect(answer.isValid, "\(answer.problems)")
        try Self.expectReadBack(answer, request: request, keys: keys, encrypted: true)
        // The cipher values the reader read are the writer's.
        let cpix = CPIXNamespace.cpix
        let written = try SafeXMLReader.read(response.body).elements(cpix, "ContentKeyList").first?.elements(cpix, "ContentKey").map { key in
            let value = key.elements(cpix, "Data").first?.elements(CPIXNamespace.pskc, "Secret").first?.elements(CPIXNamespace.pskc, "EncryptedValue").first
            return value?.elements(CPIXNamespace.xmlenc, "CipherData").first?.elements(CPIXNamespace.xmlenc, "CipherValue").first.flatMap {
                Base64.decode($0.trimmedText)
            }
        }
        #expect(answer.read?.contentKeys.map(\.cipherValue) == written)

        // AWS's request: the schema misses the DocumentKey, and the reader, which expects one, fails too.
        let requestProblems = try #require(reports["request"]).problems
        let schemaProblems = requestProblems.filter { $0.hasPrefix("schema") }
        #expect(schemaProblems.count == 1 && schemaProblems[0].contains("DocumentKey"), "\(requestProblems)")
        #expect(requestProblems.contains { $0.hasPrefix("reader:") }, "\(requestProblems)")
    }

    /// The check can fail: documents one fault away from a valid answer are reported, each for its
    /// fault, beside the valid answer in the same run.
    @Test func faultyDocumentsAreReported() async throws {
        let (_, _, response) = try Self.answer(CPIXDocuments.awsFairPlayRequest, version: .v2_0)
        let valid = String(decoding: response.body, as: UTF8.self)
        let period = "keyPeriod_2e19ac38-22d3-4bb2-b290-95a72f4732ef"
        func replacing(_ old: String, _ new: String) throws -> [UInt8] {
            try #require(valid.contains(old), "the answer holds \(old)")
            return Array(valid.replacingOccurrences(of: old, with: new).utf8)
        }
        let faulty: [(name: String, bytes: [UInt8], expected: String)] = [
            // CencSchemeType is four characters.
            ("five-letter scheme", try replacing(#"commonEncryptionScheme="cbcs""#, #"commonEncryptionScheme="cbcsx""#), "commonEncryptionScheme"),
            // KeyPeriodFilter@periodId is an IDREF: it must name a ContentKeyPeriod@id (the reader
            // checks this too).
            ("filter on no period", try replacing(#"periodId="\#(period)""#, #"periodId="keyPeriod_none""#), "keyPeriod_none"),
            // KeyIdType is a UUID.
            ("kid not a UUID", try replacing(#"kid="\#(CPIXDocuments.videoKID)""#, #"kid="873f3740""#), "kid"),
            // DRMSystem's children in schema order: URIExtXKey before HLSSignalingData.
            (
                "signaling out of order",
                try replacing(
                    #"<cpix:HLSSignalingData playlist="master">"#, #"<cpix:URIExtXKey>AA==</cpix:URIExtXKey><cpix:HLSSignalingData playlist="master">"#),
                "URIExtXKey"
            ),
            ("not well-formed", Array(valid.dropLast(20).utf8), "not well-formed"),
        ]
        let reports = try await Self.check([("valid", response.body)] + faulty.map { ($0.name, $0.bytes) })
        #expect(reports["valid"]?.isValid == true, "\(reports["valid"]?.problems ?? [])")
        for document in faulty {
            let problems = try #require(reports[document.name]).problems
            #expect(!problems.isEmpty, "\(document.name) is reported")
            // Each fault but the syntax error is the schema's to find; the reader may refuse as well.
            let layer = document.name == "not well-formed" ? "not well-formed" : "schema: "
            #expect(problems.contains { $0.hasPrefix(layer) && $0.contains(document.expected) }, "\(document.name): \(problems)")
        }
        #expect(reports["filter on no period"]?.problems.contains { $0.hasPrefix("reader:") && $0.contains("missing period") } == true)
        let verdicts = try await CPIXSchemaCheck.validate([("valid", response.body), ("broken", faulty[0].bytes)])
        #expect(verdicts["valid"] == .some(nil))
        #expect(verdicts["broken"]??.contains("commonEncryptionScheme") == true)
    }
}
