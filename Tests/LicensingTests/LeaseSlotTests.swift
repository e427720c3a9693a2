import Licensing
import Testing

@Suite("Lease slot member names")
struct LeaseSlotTests {
    @Test(
        "a member is the device ID in lower-case hex, a slash and the session ID as 16 hex digits, and parses back",
        arguments: [UInt64(0), 1, 0xabc, 0x0123_4567_89ab_cdef, .max])
    func memberFormat(sessionID: UInt64) throws {
        for device in [[UInt8](), [0x00, 0xff], (0..<20).map { UInt8(truncatingIfNeeded: $0 &* 37) }] {
            let member = LeaseSlot.member(deviceID: device, sessionID: sessionID)
            let session = String(sessionID, radix: 16)
            let expected =
                device.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
                + "/" + String(repeating: "0", count: 16 - session.count) + session
            #expect(member == expected)
            let slot = try #require(LeaseSlot(member: member, expiresAtMilliseconds: 5))
            #expect(slot == LeaseSlot(deviceID: device, sessionID: sessionID, expiresAtMilliseconds: 5))
        }
    }
}
