import FairPlay
import FairPlayDevice
import Foundation
import KSMService
import Licensing
import Testing
import Wire

/// `ksm process`'s core: Apple's server JSON from bytes in to bytes out.
@Suite("Apple's server JSON (AppleJSONProcessor)")
struct AppleJSONProcessorTests {
    static func server() throws -> KeyServerModule {
        KeyServerModule(credentials: try CredentialStore([try Fixtures.setA.credential(name: "a")]))
    }

    static func device() throws -> SimulatedDevice { SimulatedDevice(trust: try Fixtures.setA.trust()) }

    /// SPCs that between them carry every field a result reports, and leave out every optional one.
    static var variants: [SPCOptions] {
        var full = SPCOptions()
        full.playback = MediaPlaybackInfo(creationDate: 1_790_000_000, state: .readyToPlay, sessionID: 0xFEDC_BA98_7654_3210)
        full.streamingIndicator = .airPlay
        full.transactionID = .max
        full.deviceInfo = DeviceInfo(deviceType: DeviceInfo.mac, osVersion: 0x000F_0100)
        full.vmDeviceInfo = VMDeviceInfo(
            hostDeviceClass: 3, hostOSVersion: 0x000F_0100, hostVirtualizationProtocol: 1, guestDeviceClass: 3, guestOSVersion: 0x000E_0000,
            guestVirtualizationProtocol: 2)
        full.sync = .v2(
            SyncV2(
                serverChallenge: .max, flags: [.report, .success, .objectExpired], titleID: [UInt8](repeating: 0xAB, count: 16), durationToExpiry: 3600,
                invalidatedStreamIDs: [[UInt8](repeating: 1, count: 16), [UInt8](repeating: 0xFE, count: 16)]))
        full.securityLevelReport = SecurityLevelReport(level: .main, kdlVersion: 40)

        var v1 = SPCOptions()
        v1.spcVersion = 1
        v1.assetID = [0xFF, 0x00, 0x22, 0x5C]  // not text: reported as hex
        v1.sync = .v1(SyncV1(contentID: Array(0..<16), durationToExpiry: 0))
        v1.kextDenyListVersion = 30

        var bare = SPCOptions()
        bare.assetID = Array("skd://\"quoted\"\\path".utf8)
        bare.transactionID = nil
        bare.capabilities = nil
        bare.deviceIdentity = nil
        bare.securityLevelReport = nil

        var unknownLevel = SPCOptions()
        unknownLevel.securityLevelReport = SecurityLevelReport(level: SecurityLevel(rawValue: 0x0123_4567_89AB_CDEF), kdlVersion: 0)
        unknownLevel.streamingIndicator = .device(7)
        return [full, v1, bare, unknownLevel]
    }

    static func request(_ kind: String, _ ops: [[String: Any]]) throws -> [UInt8] {
        Array(try JSONSerialization.data(withJSONObject: ["fairplay-streaming-request": [kind: ops]]))
    }

    /// The results of a response, parsed back by the project's parser.
    static func results(_ output: [UInt8], _ kind: String = "create-ckc") throws -> [[String: JSONValue]] {
        guard case .object(let root) = try JSONValue(parsing: output), case .object(let body)? = root["fairplay-streaming-response"],
            case .array(let results)? = body[kind]
        else { throw Failure(description: "not a \(kind) response: \(String(decoding: output, as: UTF8.self))") }
        return try results.map {
            guard case .object(let result) = $0 else { throw Failure(description: "a result is not an object") }
            return result
        }
    }

    struct Failure: Error, CustomStringConvertible { var description: String }

    @Test("create-ckc: every result carries the SPC's values, and each CKC opens")
    func createCKCRoundTrip() throws {
        let server = try Self.server()
        let device = try Self.device()
        let made = try Self.variants.map { try device.makeSPC($0) }
        let key = "0123456789abcdef0123456789abcdef"
        let ops: [[String: Any]] = made.enumerated().map { index, spc in
            [
                "id": index + 1, "spc": Data(spc.spc).base64EncodedString(),
                "asset-info": [["content-key": key, "content-iv": "00112233445566778899aabbccddeeff", "content-type": "sd"]],
            ]
        }
        let output = AppleJSONProcessor(server: server).processToJSON(try Self.request("create-ckc", ops))
        #expect(output.last == 0x0A)
        #expect(output.dropLast().contains(0x0A) == false, "one line")
        let results = try Self.results(output)
        try #require(results.count == made.count)
        for (index, (result, spc)) in zip(results, made).enumerated() {
            #expect(result["id"] == .integer(Int64(index + 1)), "variant \(index)")
            let request: SPCRequest
            do { request = try server.open(spc.spc) } catch {
                #expect(result["status"] == .integer(Int64(error.status.rawValue)), "variant \(index)")
                continue
            }
            // A variant SDK 26's business rules refuse (a KDL below 31, say) has a status and no CKC.
            guard result["status"] == .integer(0) else {
                #expect(result["ckc"] == nil)
                continue
            }
            #expect(result["hu"] == .string(request.hu.hexString.uppercased()))
            let ckc = try #require(result["ckc"])
            guard case .string(let text) = ckc, let bytes = Base64.decode(text) else {
                Issue.record("ckc is not base64")
                continue
            }
            let opened = try CKCOpener.open(bytes, session: spc.session)
            #expect(opened.contentKey.hexString == key)
            #expect(opened.contentIV.hexString == "00112233445566778899aabbccddeeff")
        }
        // Members in Apple's order, not sorted.
        #expect(
            String(decoding: output, as: UTF8.self).hasPrefix(
                #"{"fairplay-streaming-response":{"create-ckc":[{"id":1,"status":0,"asset-id":"skd://asset-1","playback-state":{"creation-date":1790000000,"#))
    }

    @Test("get-client-info: the same values as the Foundation writer gave, no CKC")
    func getClientInfoRoundTrip() throws {
        let server = try Self.server()
        let device = try Self.device()
        let spcs = try Self.variants.map { try device.makeSPC($0).spc }
        let ops: [[String: Any]] = spcs.map { ["id": "7", "spc": Data($0).base64EncodedString()] }
        let results = try Self.results(AppleJSONProcessor(server: server).processToJSON(try Self.request("get-client-info", ops)), "get-client-info")
        try #require(results.count == spcs.count)
        for (index, (result, spc)) in zip(results, spcs).enumerated() {
            // SDK 26 answers a numeric string id as a number; no get-client-info answer has a CKC.
            #expect(result["id"] == .integer(7), "variant \(index)")
            #expect(result["ckc"] == nil)
            do {
                let request = try server.open(spc)
                #expect(result["status"] == .integer(0))
                #expect(result["hu"] == .string(request.hu.hexString.uppercased()))
            } catch {
                #expect(result["status"] == .integer(Int64(error.status.rawValue)), "variant \(index)")
            }
        }
    }

    @Test("failed operations keep their status and reason, and carry nothing else")
    func failures() throws {
        let server = try Self.server()
        let device = try Self.device()
        let spc = Data(try device.makeSPC().spc).base64EncodedString()
        let ops: [[String: Any]] = [
            ["id": 1, "spc": "not base64!", "asset-info": [["content-key": "00112233445566778899aabbccddeeff"]]],
            ["id": 2, "asset-info": [["content-key": "00112233445566778899aabbccddeeff"]]],
            ["id": 3, "spc": spc, "asset-info": [["content-key": "00112233445566778899aabbccddeeff", "content-type": "uhd"]]],
            ["id": 4, "spc": spc, "check-in": true],
            ["id": 5, "spc": spc, "asset-info": [] as [Any]],
            ["id": 6, "spc": "AAAA"],
        ]
        let results = try Self.results(AppleJSONProcessor(server: server).processToJSON(try Self.request("create-ckc", ops)))
        #expect(results.map { $0["status"] } == [-42581, -42585, -42604, -42585, -42585, -42585].map { .integer($0) })
        #expect(results.map { $0["id"] } == (1...6).map { .integer($0) })
        let reasons = results.map { result -> String in
            if case .string(let reason)? = result["reason"] { reason } else { "" }
        }
        #expect(reasons[0] == "parserErr (-42581): \"spc\" is not base64")
        #expect(reasons[1] == "paramErr (-42585): operation has no \"spc\" string")
        #expect(reasons[3].contains("check-in requested but the SPC has no sync TLLV with flags"))
        #expect(reasons[4].contains("\"asset-info\" must hold exactly one object"))
        #expect(reasons[2].contains("uhd content requires security level main"))
        for result in results { #expect(Set(result.keys) == ["id", "status", "reason"]) }
    }

    @Test(
        "a request that cannot be read answers one paramErr result with the reason",
        arguments: [
            ("{nope", "invalid JSON: expected a string key at byte 1"),
            ("[]", "request is not a JSON object"),
            (#"{"fairplay-streaming-request": {}}"#, "request has neither \"create-ckc\" nor \"get-client-info\""),
            (#"{"fairplay-streaming-request": {"create-ckc": [1]}}"#, "\"create-ckc\" is not an array of objects"),
            (#"{"fairplay-streaming-request": {"create-ckc": [], "create-ckc": []}}"#, "invalid JSON: duplicate key at byte 50"),
        ])
    func unreadableRequests(input: String, reason: String) throws {
        let output = AppleJSONProcessor(server: try Self.server()).processToJSON(Array(input.utf8))
        let results = try Self.results(output)
        #expect(results == [["id": .integer(0), "status": .integer(-42585), "reason": .string(reason)]])
    }

    @Test("Apple's sample shape with trailing commas everywhere: read, and answered as without them")
    func trailingCommas() throws {
        var options = SPCOptions()
        options.playback = MediaPlaybackInfo(creationDate: 1_790_000_000, state: .readyToPlay, sessionID: 1)
        let spc = try Self.device().makeSPC(options)
        let input = """
            {
              "fairplay-streaming-request": {
                "create-ckc": [
                  {
                    "id": 1,
                    "spc": "\(Data(spc.spc).base64EncodedString())",
                    "asset-info": [
                      {
                        "content-key": "31313131313131313131313131313131",
                        "content-iv": "546865517569636b42726f776e466f78",
                        "content-type": "sd",
                        "lease-duration": 120,
                      },
                    ],
                  },
                ],
              },
            }
            """
        let results = try Self.results(AppleJSONProcessor(server: try Self.server()).processToJSON(Array(input.utf8)))
        try #require(results.count == 1)
        #expect(results[0]["status"] == .integer(0))
        guard case .string(let text)? = results[0]["ckc"], let ckc = Base64.decode(text) else {
            Issue.record("no CKC")
            return
        }
        let opened = try CKCOpener.open(ckc, session: spc.session)
        #expect(opened.contentIV.hexString == "546865517569636b42726f776e466f78")
        #expect(opened.keyDuration?.leaseSeconds == 120)
    }

    @Test(
        "numbers and booleans are read as SDK 26's serde reads them: a fractional lease-duration is no lease, check-in 1 is not a check-in",
        arguments: [(#""lease-duration": 120.0"#, UInt32?.none, #""check-in": 1,"#), (#""lease-duration": 120"#, UInt32?(120), #""check-in": false,"#)])
    func serdeScalars(lease: String, expectedLease: UInt32?, checkIn: String) throws {
        var options = SPCOptions()
        options.playback = MediaPlaybackInfo(creationDate: 1_790_000_000, state: .readyToPlay, sessionID: 1)
        let spc = try Self.device().makeSPC(options)
        let input =
            #"{"fairplay-streaming-request": {"create-ckc": [{"id": 1, \#(checkIn) "spc": "\#(Data(spc.spc).base64EncodedString())", "asset-info": [{"content-key": "31313131313131313131313131313131", "content-type": "sd", \#(lease)}]}]}}"#
        let results = try Self.results(AppleJSONProcessor(server: try Self.server()).processToJSON(Array(input.utf8)))
        try #require(results.count == 1)
        #expect(results[0]["status"] == .integer(0))
        guard case .string(let text)? = results[0]["ckc"], let ckc = Base64.decode(text) else {
            Issue.record("no CKC: not read as a check-in")
            return
        }
        #expect(try CKCOpener.open(ckc, session: spc.session).keyDuration?.leaseSeconds == expectedLease)
    }

    @Test(
        "ids are answered as SDK 26 answers them: a non-negative integer or a numeric string as a number, anything else 0",
        arguments: [
            (#""id": 7,"#, JSONValue.integer(7)),
            (#""id": "42","#, .integer(42)),
            (#""id": "x","#, .integer(0)),
            (#""id": 2.5,"#, .integer(0)),
            (#""id": null,"#, .integer(0)),
            (#""id": {"b": [1], "a": "x"},"#, .integer(0)),
            ("", .integer(0)),
        ])
    func ids(member: String, expected: JSONValue) throws {
        let input = #"{"fairplay-streaming-request": {"get-client-info": [{\#(member) "spc": "AAAA"}]}}"#
        let results = try Self.results(AppleJSONProcessor(server: try Self.server()).processToJSON(Array(input.utf8)), "get-client-info")
        #expect(results.first?["id"] == expected)
    }
}
