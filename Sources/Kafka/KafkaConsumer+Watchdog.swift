import Synchronization

extension KafkaConsumer {
    /// Detects a stalled processing loop: messages handed out but no offset stored for longer than
    /// `threshold`.
    ///
    /// Why it exists: librdkafka 2.0.2 resets `max.poll.interval.ms` on every poll, and our poll thread
    /// keeps polling while the worker is stuck, so the broker never notices. Progress means storing an
    /// offset; idle time with nothing outstanding never counts. Every method takes `now` so tests can
    /// drive it without sleeping.
    package final class Watchdog: Sendable {
        package struct Stall: Sendable, CustomStringConvertible {
            /// How long there has been outstanding work without a stored offset.
            package var stalledFor: Duration
            /// Per partition: handed-out offsets above the last stored one (an upper bound: gaps count).
            package var outstanding: [TopicPartition: Int64]
            /// The last stored offset's time, nil if none was ever stored.
            package var lastProgress: ContinuousClock.Instant?

            package var description: String {
                "stalled for \(stalledFor) with \(outstanding.values.reduce(0, +)) outstanding message(s)"
            }
        }

        private struct Progress {
            /// Highest offset handed to the worker.
            var delivered: Int64
            /// Highest processed offset stored (not +1).
            var stored: Int64
        }

        private struct State {
            var partitions: [TopicPartition: Progress] = [:]
            /// Start of the current stretch without progress while work is outstanding.
            var since: ContinuousClock.Instant?
            var lastProgress: ContinuousClock.Instant?
            var reported = false

            var outstanding: [TopicPartition: Int64] {
                partitions.compactMapValues { $0.delivered > $0.stored ? $0.delivered - $0.stored : nil }
            }
        }

        package let threshold: Duration
        private let state = Mutex(State())

        package init(threshold: Duration) {
            self.threshold = threshold
        }

        /// The time of the last stored offset (the `lastProgress` hook), nil before the first.
        package var lastProgress: ContinuousClock.Instant? {
            state.withLock { $0.lastProgress }
        }

        /// A message was handed to the worker.
        package func messageDelivered(_ tp: TopicPartition, offset: Int64, at now: ContinuousClock.Instant = .now) {
            state.withLock { s in
                // No work outstanding before this message: a new stretch starts (checked without
                // building the `outstanding` map: this runs for every message).
                if !s.partitions.values.contains(where: { $0.delivered > $0.stored }) { s.since = now }
                var progress = s.partitions[tp] ?? Progress(delivered: offset - 1, stored: offset - 1)
                progress.delivered = max(progress.delivered, offset)
                s.partitions[tp] = progress
            }
        }

        /// The worker stored `offset` (the processed message's own offset).
        package func offsetStored(_ tp: TopicPartition, offset: Int64, at now: ContinuousClock.Instant = .now) {
            state.withLock { s in
                var progress = s.partitions[tp] ?? Progress(delivered: offset, stored: offset - 1)
                guard offset > progress.stored else { return }
                progress.stored = offset
                progress.delivered = max(progress.delivered, offset)
                s.partitions[tp] = progress
                s.lastProgress = now
                s.since = now
                s.reported = false
            }
        }

        /// Partitions revoked: their outstanding work is no longer ours to finish.
        package func forget(_ partitions: [TopicPartition], at now: ContinuousClock.Instant = .now) {
            state.withLock { s in
                for tp in partitions { s.partitions[tp] = nil }
                s.since = now
                s.reported = false
            }
        }

        /// The current stall, if any (for health checks).
        package func check(at now: ContinuousClock.Instant = .now) -> Stall? {
            state.withLock { s in Self.stall(in: s, now: now, threshold: threshold) }
        }

        /// Like `check`, but reports each stall once, until progress resets it (for the poll thread).
        func checkOnce(at now: ContinuousClock.Instant = .now) -> Stall? {
            state.withLock { s in
                guard !s.reported, let stall = Self.stall(in: s, now: now, threshold: threshold) else { return nil }
                s.reported = true
                return stall
            }
        }

        private static func stall(in s: State, now: ContinuousClock.Instant, threshold: Duration) -> Stall? {
            // Cheap test first: the poll thread asks on every poll.
            guard let since = s.since, now - since >= threshold else { return nil }
            let outstanding = s.outstanding
            guard !outstanding.isEmpty else { return nil }
            return Stall(stalledFor: now - since, outstanding: outstanding, lastProgress: s.lastProgress)
        }
    }
}
