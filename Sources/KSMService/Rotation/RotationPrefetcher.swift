import Licensing
import Logging
import ServiceLifecycle

/// Reads the next keys of rotating streams before their boundary, in the background, so the storm
/// of next-key requests at the boundary costs Redis nothing.
///
/// Each pass (every ``RotationPrefetchConfiguration/interval``) makes at most four round trips,
/// whatever the audience: the due schedules (two), one batched read of every next key and policy
/// into ``CachingLicenseStore/warm(_:holdFor:)``, and one batch of viewer counts for
/// ``RotationStatus/Snapshot/expectedLoad``. Jobs never wait on it. A failed pass is logged and
/// counted; the next pass retries (a storm without prefetch still costs one read per worker and key,
/// single-flight).
package struct RotationPrefetcher: Service {
    package let configuration: RotationPrefetchConfiguration
    package let schedules: any RotationScheduleStore
    package let cache: CachingLicenseStore
    package let status: RotationStatus
    private let logger: Logger
    private let wallClock: @Sendable () -> Int64
    /// Where each pass leaves the schedules it read, for the replies' ``NextKeyAdvice``; nil: none.
    package var adviceSchedules: RotationScheduleCache?
    /// How far ahead schedules are read for advice (the prefetch window and its margin plus a lead
    /// for players to hear it before the window opens); keys are still warmed only within the lead time.
    package var adviceHorizon: Duration = .zero

    /// - Parameter wallClock: milliseconds since 1970 (boundaries are wall-clock times). Default: the system clock.
    package init(
        configuration: RotationPrefetchConfiguration = .init(), schedules: any RotationScheduleStore, cache: CachingLicenseStore,
        status: RotationStatus = RotationStatus(), logger: Logger,
        wallClock: @escaping @Sendable () -> Int64 = { LicenseProcessor.currentTimeMilliseconds() }
    ) {
        self.configuration = configuration
        self.schedules = schedules
        self.cache = cache
        self.status = status
        self.logger = logger
        self.wallClock = wallClock
    }

    package func run() async throws {
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            do throws(LicenseStoreError) {
                try await pass()
            } catch {
                status.update { $0.failedPasses += 1 }
                logger.warning("rotation prefetch pass failed; retrying next pass", metadata: ["error": "\(error)"])
            }
            do {
                // Graceful shutdown ends the wait: an interval's sleep must not delay the process's exit.
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: self.configuration.interval) }
            } catch {
                return  // cancelled, or shutting down
            }
        }
    }

    /// One pass at the wall-clock time `now`: warm the next keys due within the lead time and
    /// publish the expected load. Public for tests and for `ksm admin` tooling.
    /// - Returns: the keys read ahead in this pass.
    @discardableResult
    package func pass(now: Int64? = nil) async throws(LicenseStoreError) -> Int {
        let nowMilliseconds = now ?? wallClock()
        let lead = Self.milliseconds(configuration.leadTime)
        let horizon = adviceSchedules == nil ? lead : max(lead, Self.milliseconds(adviceHorizon))
        let known = try await schedules.dueRotations(from: nowMilliseconds, through: nowMilliseconds + horizon)
        adviceSchedules?.replace(with: known)
        let due = horizon == lead ? known : known.filter { $0.boundaryMilliseconds <= nowMilliseconds + lead }
        var warmed = 0
        if let last = due.last {
            // Hold every key until the latest boundary of this pass plus the storm's length: one
            // read, one expiry; the next pass re-reads whatever is still due.
            let holdMilliseconds = last.boundaryMilliseconds - nowMilliseconds + Self.milliseconds(configuration.holdAfterBoundary)
            warmed = try await cache.warm(due.map(\.nextKeyRequest), holdFor: .milliseconds(holdMilliseconds))
        }
        let viewers = try await schedules.viewerCounts(due, nowMilliseconds: nowMilliseconds)
        let load = ExpectedRotationLoad.requests(schedules: due, viewers: viewers, nowMilliseconds: nowMilliseconds, horizonMilliseconds: lead)
        status.update {
            $0.expectedLoad = load
            $0.dueSchedules = due.count
            $0.keysPrefetched += warmed
            $0.lastPassMilliseconds = nowMilliseconds
        }
        if !due.isEmpty {
            logger.debug("rotation prefetch", metadata: ["due": "\(due.count)", "warmed": "\(warmed)", "expected_load": "\(load)"])
        }
        return warmed
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
