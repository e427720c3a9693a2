import Licensing
import Testing

/// A viewer's place in the prefetch window: inside it, the same every time, and N viewers spread evenly.
@Suite struct PrefetchWindowTests {
    let window = PrefetchWindow(windowMilliseconds: 60_000, marginMilliseconds: 10_000)
    let boundary: Int64 = 1_800_000_000_000

    func viewer(_ n: Int) -> PrefetchWindow.ViewerIdentity {
        PrefetchWindow.ViewerIdentity(tenant: "acme", account: "account-\(n)", sessionID: UInt64(n))
    }

    @Test("a fetch time lies in the window, closing the margin before the boundary, and is the same on every call")
    func insideAndDeterministic() throws {
        let now = boundary - 3_600_000
        for n in 0..<1_000 {
            let at = try #require(window.fetchTime(boundaryMilliseconds: boundary, viewer: viewer(n), nowMilliseconds: now))
            #expect(at >= boundary - 70_000 && at < boundary - 10_000)
            // Before the window opens the clock plays no part.
            #expect(window.fetchTime(boundaryMilliseconds: boundary, viewer: viewer(n), nowMilliseconds: now + 1_234_567) == at)
        }
    }

    @Test("10,000 viewers spread evenly over the window: every tenth of it within 12 % of a tenth of them")
    func spreadsEvenly() throws {
        var buckets = [Int](repeating: 0, count: 10)
        for n in 0..<10_000 {
            let at = try #require(window.fetchTime(boundaryMilliseconds: boundary, viewer: viewer(n), nowMilliseconds: 0))
            buckets[Int((at - (boundary - 70_000)) / 6_000)] += 1
        }
        #expect(buckets.allSatisfy { abs($0 - 1_000) <= 120 }, "\(buckets)")
        // And no one second of the window takes more than twice its share (167 of 10,000 per second).
        var perSecond = [Int](repeating: 0, count: 60)
        for n in 0..<10_000 {
            let at = window.fetchTime(boundaryMilliseconds: boundary, viewer: viewer(n), nowMilliseconds: 0) ?? 0
            perSecond[Int((at - (boundary - 70_000)) / 1_000)] += 1
        }
        #expect(perSecond.max() ?? 0 <= 2 * 10_000 / 60, "\(perSecond)")
    }

    @Test("viewers differing only in account, session or tenant land at different times; the next boundary moves them")
    func identityMatters() {
        let at = { (v: PrefetchWindow.ViewerIdentity, b: Int64) in self.window.fetchTime(boundaryMilliseconds: b, viewer: v, nowMilliseconds: 0) }
        let base = viewer(1)
        #expect(at(base, boundary) != at(PrefetchWindow.ViewerIdentity(tenant: "acme", account: "account-1", sessionID: 2), boundary))
        #expect(at(base, boundary) != at(PrefetchWindow.ViewerIdentity(tenant: "globex", account: "account-1", sessionID: 1), boundary))
        #expect(at(base, boundary) != at(base, boundary + 600_000).map { $0 - 600_000 })
    }

    @Test("a viewer answered inside the window is placed in what remains of it; after it closes, or with no window, nothing")
    func lateAndOff() throws {
        let now = boundary - 20_000
        for n in 0..<200 {
            let at = try #require(window.fetchTime(boundaryMilliseconds: boundary, viewer: viewer(n), nowMilliseconds: now))
            #expect(at >= now && at < boundary - 10_000)
        }
        #expect(window.fetchTime(boundaryMilliseconds: boundary, viewer: viewer(1), nowMilliseconds: boundary - 10_000) == nil)
        #expect(window.fetchTime(boundaryMilliseconds: boundary, viewer: viewer(1), nowMilliseconds: boundary + 1) == nil)
        let off = PrefetchWindow(windowMilliseconds: 0, marginMilliseconds: 10_000)
        #expect(off.fetchTime(boundaryMilliseconds: boundary, viewer: viewer(1), nowMilliseconds: 0) == nil)
    }
}
