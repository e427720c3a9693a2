import Licensing
import Testing
import Wire

@testable import RedisStore

/// The wire form written without hiredis's formatter must be exactly RESP: these compare bytes.
struct RedisCommandEncoderTests {
    private func wire(_ command: RedisCommand) -> String {
        var out: [UInt8] = []
        command.write(into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    @Test("Plain arguments become one RESP array of bulk strings, empty and binary ones included")
    func plainCommand() {
        #expect(wire(RedisCommand(["SET", "k", ""])) == "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n")
        var out: [UInt8] = []
        RedisCommand(["GET", RedisArgument([0x00, 0x0d, 0x0a, 0xff])]).write(into: &out)
        #expect(out == Array("*2\r\n$3\r\nGET\r\n$4\r\n".utf8) + [0x00, 0x0d, 0x0a, 0xff] + Array("\r\n".utf8))
    }

    @Test(
        "Integers are written in decimal with their exact length, negatives and extremes included",
        arguments: [Int64(0), 7, 10, 99, 100, -1, -10, 1_763_790_000_000, .max, .min])
    func integers(value: Int64) {
        var encoder = RedisCommandEncoder()
        encoder.append(value)
        let text = String(value)
        #expect(String(decoding: encoder.bytes, as: UTF8.self) == "$\(text.utf8.count)\r\n\(text)\r\n")
        #expect(encoder.count == 1)
    }

    @Test("Keys written from a shared prefix equal the keys the data model names")
    func prefixedKeys() throws {
        let tenant = try StoreIdentifier("acme")
        let account = try StoreIdentifier("viewer-7")
        let request = try StoreIdentifier("job-1")
        let prefix = RedisKeys.accountPrefix(tenant, account: account)
        var encoder = RedisCommandEncoder()
        encoder.append(prefix, RedisKeys.Account.slots)
        encoder.append(prefix, RedisKeys.Account.leaseRequest, request.value)
        encoder.append(hex: [0x00, 0xab, 0x7f])
        var expected = RedisCommandEncoder()
        expected.append(RedisKeys.slots(tenant, account: account))
        expected.append(RedisKeys.leaseRequest(tenant, account: account, requestID: request))
        expected.append("00ab7f")
        #expect(encoder.bytes == expected.bytes)
        #expect(String(decoding: RedisKeys.slots(tenant, account: account).bytes, as: UTF8.self) == "fps:{t:acme:a:viewer-7}:slots")
    }

    @Test("A script is sent as EVALSHA once its SHA is known, as EVAL before that and for NOSCRIPT")
    func scripts() {
        let script = RedisScript("return 1")
        let command = RedisCommand.evalScript(script, keys: ["k"], arguments: ["a"])
        #expect(wire(command) == "*5\r\n$4\r\nEVAL\r\n$8\r\nreturn 1\r\n$1\r\n1\r\n$1\r\nk\r\n$1\r\na\r\n")
        script.remember(sha1: "e0e1f9fabfc9d4800c877a703b823ac0578ff8db")
        #expect(wire(command) == "*5\r\n$7\r\nEVALSHA\r\n$40\r\ne0e1f9fabfc9d4800c877a703b823ac0578ff8db\r\n$1\r\n1\r\n$1\r\nk\r\n$1\r\na\r\n")
        var eval: [UInt8] = []
        command.writeEval(into: &eval)
        #expect(String(decoding: eval, as: UTF8.self).hasPrefix("*5\r\n$4\r\nEVAL\r\n"))
    }

    /// The lease script's call listed one `RedisArgument` per key and argument, in the order its
    /// header names them, through `evalScript(keys:arguments:)`.
    private func argumentList(_ r: LeaseRequest) -> RedisCommand {
        var arguments: [RedisArgument] = [
            RedisArgument(r.nowMilliseconds), RedisArgument(r.slotMember), RedisArgument(r.expiresAtMilliseconds),
            RedisArgument(r.maxConcurrentStreams), RedisArgument(leaseIdempotencyWindowMilliseconds),
            RedisArgument(r.slot == .none ? "n" : r.slot == .hold ? "h" : "a"), RedisArgument(r.endOldestWhenFull ? "1" : "0"),
            RedisArgument(r.deviceLimit.map { String($0) } ?? ""), RedisArgument(HexEncoding.encode(r.deviceID)),
            RedisArgument(r.rentalAssetID.map { HexEncoding.encode($0) } ?? ""),
            RedisArgument(RedisLicenseStore.accountRecordRetentionMilliseconds), RedisArgument(r.offlineRecords.count),
            RedisArgument(r.invalidatedStreamIDs.count),
        ]
        for record in r.offlineRecords {
            arguments.append(RedisArgument(HexEncoding.encode(record.streamID)))
            arguments.append(RedisArgument(record.jsonBytes()))
        }
        arguments += r.invalidatedStreamIDs.map { RedisArgument(HexEncoding.encode($0)) }
        let (t, a) = (r.tenant, r.account)
        return RedisCommand.evalScript(
            LeaseScriptCall.script,
            keys: [
                RedisKeys.slots(t, account: a), RedisKeys.leaseRequest(t, account: a, requestID: r.requestID),
                RedisKeys.slotStarts(t, account: a), RedisKeys.endedSlots(t, account: a), RedisKeys.devices(t, account: a),
                RedisKeys.rentals(t, account: a), RedisKeys.offline(t, account: a), RedisKeys.invalidated(t, account: a),
            ],
            arguments: arguments)
    }

    @Test("The lease script call written directly is byte for byte the listed keys and arguments", arguments: 0..<4)
    func leaseCommandMatchesTheArgumentList(shape: Int) throws {
        let record = OfflineLicenseRecord(
            streamID: [UInt8](repeating: 0xa5, count: 16), titleID: nil, assetID: "skd://movie",
            deviceID: [1, 2, 3], issuedAt: 1_763_790_000_000, storageSeconds: 86_400, playbackSeconds: 3_600)
        let request = LeaseRequest(
            requestID: try StoreIdentifier("job-\(shape)"), tenant: try StoreIdentifier("acme"), account: try StoreIdentifier("family-9"),
            deviceID: [0x00, 0xff, 0x10, 0x7e], sessionID: shape == 0 ? 0 : .max, maxConcurrentStreams: shape,
            leaseDurationSeconds: shape == 3 ? 0 : 300, nowMilliseconds: shape == 2 ? 0 : 1_763_790_123_456,
            slot: [.acquireOrRenew, .hold, .none, .acquireOrRenew][shape], endOldestWhenFull: shape.isMultiple(of: 2),
            deviceLimit: [nil, 3, 0, -1][shape], rentalAssetID: [nil, [], [0xde, 0xad], nil][shape],
            offlineRecords: shape == 1 ? [record, record] : [], invalidatedStreamIDs: shape == 3 ? [[1], [0xff, 0]] : [])
        // The encoded key count, keys and arguments (the EVALSHA/EVAL prefix depends on whether
        // another test loaded the shared script meanwhile; `scripts()` covers it).
        let direct = LeaseScriptCall(request, member: request.slotMember).command.arguments
        let listed = argumentList(request).arguments
        #expect(direct.count == listed.count && direct.count >= 21)
        #expect(direct.bytes == listed.bytes)
    }
}
