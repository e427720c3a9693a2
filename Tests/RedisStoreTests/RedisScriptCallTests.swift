import Foundation
import Licensing
import Testing

@testable import RedisStore

/// Every script's header (`local name = KEYS[n]`, `local name = ARGV[n]`) against the names its
/// call struct writes, in order: the struct and the Lua cannot drift apart without failing here.
struct RedisScriptCallTests {
    /// One call of each script, with every optional part present (the lease call's tail included).
    struct Sample: Sendable, CustomTestStringConvertible {
        var testDescription: String
        var call: any RedisScriptCall
    }

    private static func id(_ text: String) -> StoreIdentifier { try! StoreIdentifier(text) }  // test literals are valid

    static let samples: [Sample] = {
        let (t, a) = (id("acme"), id("alice"))
        let record = OfflineLicenseRecord(
            streamID: [0xa5, 0x5a], titleID: nil, assetID: "skd://movie", deviceID: [1, 2, 3], issuedAt: 1_763_790_000_000,
            storageSeconds: 86_400, playbackSeconds: 3_600)
        var lease = LeaseRequest(
            requestID: id("r1"), tenant: t, account: a, deviceID: [1, 2], sessionID: 7, maxConcurrentStreams: 2, leaseDurationSeconds: 600,
            nowMilliseconds: 1_763_790_000_000, endOldestWhenFull: true, deviceLimit: 3, rentalAssetID: [5], offlineRecords: [record, record],
            invalidatedStreamIDs: [[1], [2]])
        lease.expectsLiveSlot = true
        var renewal = lease
        (renewal.rentalAssetID, renewal.offlineRecords, renewal.invalidatedStreamIDs) = (nil, [], [])
        let reply = RedisKeys.reply(t, account: a, jobID: id("j"))
        // The renewal request qualifies by construction (a live-slot hint, nothing but the slot).
        let renewalCall = RenewalScriptCall(renewal, member: renewal.slotMember)!
        return [
            Sample(testDescription: "lease", call: LeaseScriptCall(lease, member: lease.slotMember)),
            Sample(testDescription: "renewal", call: renewalCall),
            Sample(
                testDescription: "admission",
                call: AdmissionScriptCall(replyKey: reply, counterKey: RedisKeys.rateCounter(t, account: a, window: 1), counterTTLMilliseconds: 2)),
            Sample(
                testDescription: "claim",
                call: ClaimScriptCall(claimKey: RedisKeys.spcClaim(t, transactionID: 1, digest: [1]), jobID: "j", windowMilliseconds: 1)),
            Sample(testDescription: "stored reply", call: StoreReplyScriptCall(replyKey: reply, reply: [1, 2], ttlMilliseconds: 1)),
        ]
    }()

    /// What a script's source declares: the header's names by position, where its variable tail
    /// starts, and what the body gets wrong.
    struct Header {
        var keys: [String] = []
        var arguments: [String] = []
        /// `local tail = n`, right after the header: the first ARGV read by position.
        var tail: Int?
        var problems: [String] = []

        init(_ source: String) {
            var lines = source.split(separator: "\n", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }[...]
            while let line = lines.first, let (name, table, index) = Self.declaration(line) {
                let list = table == "KEYS" ? keys : arguments
                if index != list.count + 1 { problems.append("\(name) is \(table)[\(index)], expected \(table)[\(list.count + 1)]") }
                if table == "KEYS" { keys.append(name) } else { arguments.append(name) }
                lines = lines.dropFirst()
            }
            if let line = lines.first, line.hasPrefix("local tail = ") {
                tail = Int(line.dropFirst("local tail = ".count))
                lines = lines.dropFirst()
            }
            let body = lines.joined(separator: "\n")
            // Below the header, arguments are used by name, or read by a cursor (`ARGV[i]`) in the tail.
            if body.contains("KEYS[") { problems.append("the body indexes KEYS") }
            for range in body.ranges(of: "ARGV[") where body[range.upperBound...].first?.isNumber == true {
                problems.append("the body reads ARGV by a literal position: \(body[range.lowerBound...].prefix(10))")
            }
            for name in keys + arguments where !Self.uses(body, name) { problems.append("\(name) is declared and never used") }
            if Set(keys + arguments).count != keys.count + arguments.count { problems.append("a name is declared twice") }
        }

        /// `local name = KEYS[n]`, `local name = ARGV[n]` or `local name = tonumber(ARGV[n])`.
        private static func declaration(_ line: String) -> (name: String, table: String, index: Int)? {
            guard line.hasPrefix("local "), let equals = line.range(of: " = ") else { return nil }
            let name = String(line[line.index(line.startIndex, offsetBy: 6)..<equals.lowerBound])
            var value = line[equals.upperBound...]
            if value.hasPrefix("tonumber("), value.hasSuffix(")") { value = value.dropFirst("tonumber(".count).dropLast() }
            for table in ["KEYS", "ARGV"] where value.hasPrefix(table + "[") && value.hasSuffix("]") {
                guard let index = Int(value.dropFirst(table.count + 1).dropLast()) else { return nil }
                return (name, table, index)
            }
            return nil
        }

        /// Whether `name` occurs in `text` as a whole identifier.
        private static func uses(_ text: String, _ name: String) -> Bool {
            func isIdentifier(_ c: Character?) -> Bool { c.map { $0.isLetter || $0.isNumber || $0 == "_" } ?? false }
            return text.ranges(of: name).contains { range in
                !isIdentifier(range.lowerBound > text.startIndex ? text[text.index(before: range.lowerBound)] : nil)
                    && !isIdentifier(range.upperBound < text.endIndex ? text[range.upperBound] : nil)
            }
        }
    }

    @Test("each script's header names its KEYS and ARGV in the order its call struct writes them", arguments: samples)
    func headerMatchesEncodingOrder(_ sample: Sample) {
        let type = type(of: sample.call)
        let header = Header(type.script.source)
        let written = sample.call.encodedNames
        #expect(header.problems == [])
        #expect(written.outOfOrder == [])
        #expect(header.keys == written.keys)
        #expect(header.arguments == written.arguments)
        #expect(written.keys.count == type.keyCount)
        // A call with a variable tail says where it starts; one without has none.
        #expect(header.tail == (written.tail.isEmpty ? nil : written.arguments.count + 1))
        // What is encoded is what was named: key count, keys, arguments, tail.
        #expect(sample.call.command.arguments.count == 1 + written.keys.count + written.arguments.count + written.tail.count)
    }

    /// A call whose struct wrote a key after an argument, for the check below.
    struct Misordered: RedisScriptCall {
        static let keyCount = 1
        static let script = RedisScript("local k = KEYS[1]\nlocal a = ARGV[1]\nreturn {k, a}")
        func encode(into a: inout RedisScriptArguments) {
            a.argument("a", 1)
            a.key("k", "key")
        }
    }

    @Test("a key written after an argument is caught, and a header out of position is named")
    func misorderIsCaught() {
        #expect(Misordered().encodedNames.outOfOrder == ["k"])
        #expect(Header("local a = ARGV[2]\nreturn a").problems == ["a is ARGV[2], expected ARGV[1]"])
        #expect(Header("local a = ARGV[1]\nreturn a .. ARGV[2]").problems.count == 1)
        #expect(Header("local a = ARGV[1]\nlocal b = ARGV[2]\nreturn a").problems == ["b is declared and never used"])
    }
}
