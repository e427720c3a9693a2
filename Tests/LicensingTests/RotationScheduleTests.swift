import Licensing
import Testing
import Wire

@Suite struct RotationScheduleTests {
    static func id(_ text: String) -> StoreIdentifier {
        // Test literals are valid by construction.
        try! StoreIdentifier(text)
    }
    let now: Int64 = 1_700_000_000_000

    @Test func boundaryParsesAbsoluteAndRelativeTimes() {
        #expect(RotationSchedule.parseBoundary("1767225600000", nowMilliseconds: now) == 1_767_225_600_000)
        #expect(RotationSchedule.parseBoundary("+90s", nowMilliseconds: now) == now + 90_000)
        #expect(RotationSchedule.parseBoundary("+15m", nowMilliseconds: now) == now + 900_000)
        #expect(RotationSchedule.parseBoundary("+2h", nowMilliseconds: now) == now + 7_200_000)
        for bad in ["", "+", "+5d", "-5", "+-5s", "soon", "+s"] {
            #expect(RotationSchedule.parseBoundary(bad, nowMilliseconds: now) == nil, "\(bad)")
        }
    }

    @Test func expectedLoadIsViewersTimesKeysWithinTheHorizon() {
        func schedule(_ asset: String, in ms: Int64, keys: Int = 1) -> RotationSchedule {
            RotationSchedule(tenant: Self.id("acme"), assetID: Array(asset.utf8), boundaryMilliseconds: now + ms, keysPerViewer: keys)
        }
        let schedules = [schedule("a", in: 5_000), schedule("b", in: 20_000, keys: 2), schedule("c", in: 45_000), schedule("d", in: -1_000)]
        let load = ExpectedRotationLoad.requests(schedules: schedules, viewers: [1_000, 300, 50_000, 9_999], nowMilliseconds: now, horizonMilliseconds: 30_000)
        #expect(load == 1_000 + 300 * 2, "c is beyond the horizon, d is past")
        #expect(ExpectedRotationLoad.requests(schedules: schedules, viewers: [], nowMilliseconds: now, horizonMilliseconds: 30_000) == 0)
        #expect(
            ExpectedRotationLoad.requests(schedules: [schedule("a", in: 1)], viewers: [Int.max], nowMilliseconds: now, horizonMilliseconds: 30_000) == Int.max)
        #expect(
            ExpectedRotationLoad.requests(schedules: [schedule("a", in: 1, keys: 2)], viewers: [Int.max], nowMilliseconds: now, horizonMilliseconds: 30_000)
                == Int.max,
            "saturates instead of trapping")
    }
}
