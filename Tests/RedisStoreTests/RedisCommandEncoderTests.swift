import Licensing
import Testing

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

    @Test("Integers are written in decimal with their exact length, negatives and extremes included",
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
        let tenant = try StoreIdentifier("acme"), account = try StoreIdentifier("viewer-7"), request = try StoreIdentifier("job-1")
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
}
