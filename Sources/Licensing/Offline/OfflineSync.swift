import FairPlay

/// Applies a sync SPC (guide, "Sync", tables 6-2 to 6-4) to the offline licenses recorded for the
/// device. Pure: the worker passes the device's records from the store and writes back
/// ``SyncOutcome/updated``.
///
/// - v1: a report for one content ID: its remaining time.
/// - v2 `report`: the remaining time of every license of the title.
/// - v2 `secure-invalidation`: the listed stream IDs are gone from the device (when none are listed
///   and the device reports success, every license of the title is).
/// - v2 `secure-invalidation-all` ("delete all"): every license of the device is gone.
/// - v2 `object-not-found` / `object-expired`: the title's licenses are marked so.
/// A duration to expiry of 0 means expired; `0xFFFFFFFF` means no expiry.
package enum OfflineSync {
    package static func apply(
        _ sync: SyncRequest, deviceID: [UInt8], records: [OfflineLicenseRecord], expectedChallenge: UInt64? = nil, nowMilliseconds now: Int64
    ) -> SyncOutcome {
        var out = SyncOutcome()
        var changed: [Int: OfflineLicenseRecord] = [:]
        let mine = records.indices.filter { records[$0].deviceID == deviceID }
        func update(_ i: Int, _ change: (inout OfflineLicenseRecord) -> Void) {
            var r = changed[i] ?? records[i]
            change(&r)
            r.lastSyncAt = now
            changed[i] = r
        }
        func report(_ i: Int, _ duration: UInt32) {
            update(i) { r in
                switch duration {
                case 0:
                    r.reportedExpiresAt = now
                    if r.state == .active { r.state = .expired }
                case .max: r.reportedExpiresAt = nil
                default: r.reportedExpiresAt = now + Int64(duration) * 1000
                }
            }
        }
        func invalidate(_ i: Int) {
            update(i) { r in if case .invalidated = r.state {} else { r.state = .invalidated(at: now) } }
            out.invalidatedStreamIDs.append(records[i].streamID)
        }

        switch sync {
        case .v1(let s):
            out.actions = [.report]
            let hits = mine.filter { records[$0].streamID == s.contentID }
            if hits.isEmpty { out.unknownStreamIDs.append(s.contentID) }
            for i in hits { report(i, s.durationToExpiry) }
        case .v2(let s):
            if let expectedChallenge { out.challengeMatches = s.serverChallenge == expectedChallenge }
            let title = mine.filter { records[$0].titleID == s.titleID }
            if s.flags.contains(.report) {
                out.actions.append(.report)
                for i in title { report(i, s.durationToExpiry) }
            }
            if s.flags.contains(.secureInvalidation) || s.flags.contains(.secureInvalidationAll) {
                out.actions.append(s.flags.contains(.secureInvalidationAll) ? .invalidateAll : .secureInvalidation)
                var targets = Set<Int>()
                for id in s.invalidatedStreamIDs {
                    let hits = mine.filter { records[$0].streamID == id }
                    if hits.isEmpty {
                        // Kept as invalidated too: the device says it is gone, so a record with this
                        // ID must never come back to life.
                        out.unknownStreamIDs.append(id)
                        out.invalidatedStreamIDs.append(id)
                    }
                    targets.formUnion(hits)
                }
                if s.flags.contains(.secureInvalidationAll), s.flags.contains(.success) {
                    targets.formUnion(mine)
                } else if s.invalidatedStreamIDs.isEmpty, s.flags.contains(.success) {
                    targets.formUnion(title)
                }
                for i in targets.sorted() { invalidate(i) }
            }
            if s.flags.contains(.objectNotFound) {
                for i in title where records[i].isActive { update(i) { $0.state = .notFoundOnDevice } }
            }
            if s.flags.contains(.objectExpired) {
                for i in title where records[i].isActive { update(i) { $0.state = .expired } }
            }
            out.deviceReportedSuccess = s.flags.contains(.success)
        }
        out.updated = changed.keys.sorted().compactMap { changed[$0] }
        return out
    }
}

/// What a sync SPC changes in the offline license records.
package struct SyncOutcome: Hashable, Sendable {
    /// What the device asked for, in the order applied.
    package var actions: [SyncAction] = []
    /// Records to write back (only those that changed).
    package var updated: [OfflineLicenseRecord] = []
    /// Stream IDs invalidated by this sync, to keep (so they are never treated as live again).
    package var invalidatedStreamIDs: [[UInt8]] = []
    /// Stream or content IDs the device named that no record of this device has.
    package var unknownStreamIDs: [[UInt8]] = []
    /// Whether a v2 sync carried the server challenge the caller expected; nil when not checked.
    package var challengeMatches: Bool?
    /// A v2 sync's success flag.
    package var deviceReportedSuccess: Bool = false

    package init() {}
}

/// A sync request's operation (guide table 6-4).
package enum SyncAction: String, Hashable, Sendable {
    case report
    case secureInvalidation = "secure-invalidation"
    case invalidateAll = "invalidate-all"
}
