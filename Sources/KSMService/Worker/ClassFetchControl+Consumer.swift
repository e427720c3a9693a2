import Kafka
import Logging

/// The consumer calls that switching a class's fetching needs, so a test can put a consumer that
/// fails in front of the worker's state. The worker passes its ``KafkaConsumer`` straight to the
/// generic ``ClassFetchControl/apply(_:to:topics:)``: no wrapper, no test hook on its path, and an
/// optimised build specialises the calls.
package protocol PartitionFetchSwitching: Sendable {
    /// The partitions assigned now.
    func assignment() throws(KafkaError) -> [TopicPartition]
    /// Pauses them; returns those refused, with why (``KafkaConsumer/pause(_:)``).
    func pause(_ partitions: [TopicPartition]) throws(KafkaError) -> [TopicPartition: KafkaError]
    /// Resumes them; returns those refused, with why (``KafkaConsumer/resume(_:)``).
    func resume(_ partitions: [TopicPartition]) throws(KafkaError) -> [TopicPartition: KafkaError]
}

extension KafkaConsumer: PartitionFetchSwitching {}

extension ClassFetchControl {
    /// Makes `change` on the consumer, pauses first, each on the assigned partitions of its classes,
    /// and returns per class what librdkafka did: a class is switched only when every one of its
    /// partitions was (a class with none assigned is switched trivially). A failed `assignment()`
    /// fails every class of the change; a failed call fails every class it was for; a refused
    /// partition fails its class alone. Switching a partition already in that state changes nothing,
    /// so a retry makes the whole class's switch again.
    static func apply(_ change: Change, to consumer: some PartitionFetchSwitching, topics: RequestTopics) -> Outcome {
        var outcome = Outcome()
        if change.isEmpty { return outcome }
        let assigned: [TopicPartition]
        do throws(KafkaError) {
            assigned = try consumer.assignment()
        } catch {
            for fetchClass in change.pause { outcome.failed[fetchClass] = Failure(action: .pause, error: error) }
            for fetchClass in change.resume { outcome.failed[fetchClass] = Failure(action: .resume, error: error) }
            return outcome
        }
        for (action, classes) in [(Action.pause, change.pause), (.resume, change.resume)] where !classes.isEmpty {
            let partitions = assigned.filter { classes.contains(topics.fetchClass(of: $0)) }
            var refusedClasses: [FetchClass: KafkaError] = [:]
            do throws(KafkaError) {
                let refused = try action == .pause ? consumer.pause(partitions) : consumer.resume(partitions)
                for (partition, error) in refused { refusedClasses[topics.fetchClass(of: partition)] = error }
            } catch {
                for fetchClass in classes { refusedClasses[fetchClass] = error }
            }
            for fetchClass in classes {
                if let error = refusedClasses[fetchClass] {
                    outcome.failed[fetchClass] = Failure(action: action, error: error)
                } else {
                    outcome.switched[fetchClass] = action
                }
            }
        }
        return outcome
    }
}

extension ClassFetchControl {
    /// Tells a switch made, a failure (at its first attempt and then every 40th, about every 10 s at
    /// the retry interval, so a switch that keeps failing neither floods the log nor goes quiet) and
    /// a class switched after failing.
    static func log(_ outcome: Outcome, _ report: Report, logger: Logger) {
        if !outcome.switched.isEmpty {
            let paused = outcome.switched.filter { $0.value == .pause }.keys.map(\.description).sorted()
            let resumed = outcome.switched.filter { $0.value == .resume }.keys.map(\.description).sorted()
            logger.debug("fetching changed", metadata: ["paused": "\(paused)", "resumed": "\(resumed)"])
        }
        for (fetchClass, failed) in report.failed where failed.attempts == 1 || failed.attempts % 40 == 0 {
            logger.warning(
                "\(failed.failure.action) of a request topic failed; retrying until librdkafka takes it",
                metadata: [
                    "class": "\(fetchClass)", "attempts": "\(failed.attempts)", "error": "\(failed.failure.error)",
                ])
        }
        for (fetchClass, attempts) in report.recovered {
            logger.info(
                "request topic switched after failed attempts",
                metadata: [
                    "class": "\(fetchClass)", "attempts": "\(attempts)", "now": "\(outcome.switched[fetchClass].map(\.rawValue) ?? "")",
                ])
        }
    }
}

extension WorkerState {
    /// How often fetching is re-decided with no message arriving and no batch settling. The read loop
    /// wakes only for consumer events, and a paused worker may get none; a failed switch is made
    /// again at least this often, and room a revocation freed is seen within it.
    static let fetchRetryInterval: Duration = .milliseconds(250)

    /// Re-decides fetching and makes the switches still to make every `interval`, until the task is
    /// cancelled (the worker runs it beside its read loop).
    nonisolated func keepFetchSwitchesMade(every interval: Duration = fetchRetryInterval) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            if Task.isCancelled { return }
            await fetchChange()
        }
    }
}

extension WorkerStatistics {
    /// One fetch-switch failure series: the fetch class (`requests`, `continuity`, `new`,
    /// `prefetch`) and the action (`pause`, `resume`).
    package struct FetchSwitchKey: Sendable, Hashable, Comparable {
        package var fetchClass: String
        package var action: String
        package static func < (a: FetchSwitchKey, b: FetchSwitchKey) -> Bool { (a.fetchClass, a.action) < (b.fetchClass, b.action) }
    }
}
