import Foundation
import KSMService
import Licensing

/// Kafka: brokers, group, topics, reply topics and librdkafka properties.
extension ServeConfigurationResolver {
    mutating func kafka() -> WorkerConfiguration {
        var worker = WorkerConfiguration(brokers: string(.brokers) ?? "")
        worker.groupID = string(.group) ?? worker.groupID
        worker.requestsTopic = string(.requestsTopic) ?? worker.requestsTopic
        worker.repliesTopic = string(.repliesTopic) ?? worker.repliesTopic
        worker.deadLetterTopic = string(.dlqTopic) ?? worker.deadLetterTopic
        worker.classTopics = boolean(.classTopics)
        checkTopics(worker)
        worker.replyTopics = replyTopics(repliesTopic: worker.repliesTopic)
        worker.instanceID = string(.instanceID)
        worker.kafkaProperties = map(.kafkaProperties)
        let files = KafkaPropertyFiles.read(map(.kafkaPropertyFiles), inline: worker.kafkaProperties)
        worker.kafkaProperties.merge(files.properties) { inline, _ in inline }
        let location = sources.sourcesOfMap(.kafkaPropertyFiles)
        for file in files.problems { problem(.unreadableFile, location, "\(location): \(file.description).") }
        return worker
    }

    /// The reply-topic allowlist given, checked; nil (the worker's default policy) when none is.
    private mutating func replyTopics(repliesTopic: String) -> ReplyTopicPolicy? {
        let setting = ServeSetting.replyTopics
        guard let entries = strings(setting) else {
            note(setting, ReplyTopicPolicy.defaultPolicy(repliesTopic: repliesTopic).entries.joined(separator: ","), isDefault: true)
            return nil
        }
        do {
            let policy = try ReplyTopicPolicy(entries: entries)
            note(setting, policy.entries.joined(separator: ","))
            return policy
        } catch {
            let location = whereWritten(setting)
            problem(.invalidValue, location, "\(location): \(error.description).")
            return nil
        }
    }

    /// Kafka's topic names: 1...249 of `[a-zA-Z0-9._-]`, not `.` or `..`. With class topics the
    /// requests topic's name grows by a class, and none of the topics read may be one written to.
    private mutating func checkTopics(_ worker: WorkerConfiguration) {
        func legal(_ name: String) -> Bool {
            !name.isEmpty && name.utf8.count <= 249 && name != "." && name != ".."
                && name.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0)) }
        }
        let read = RequestTopics(requestsTopic: worker.requestsTopic, classTopics: worker.classTopics).all
        let topics: [(ServeSetting, [String])] = [(.requestsTopic, read), (.repliesTopic, [worker.repliesTopic]), (.dlqTopic, [worker.deadLetterTopic])]
        for (setting, names) in topics {
            guard let bad = names.first(where: { !legal($0) }) else { continue }
            let location = whereWritten(setting)
            let classNote =
                setting.key == ServeSetting.requestsTopic.key && worker.classTopics
                ? " (with class-topics the name also takes a class suffix such as .continuity)" : ""
            problem(
                .invalidValue, location,
                "\(location) makes the topic name \"\(bad)\", which Kafka refuses: use 1 to 249 letters, digits, '.', '_' or '-'\(classNote).")
        }
        for (setting, written) in [(ServeSetting.repliesTopic, worker.repliesTopic), (.dlqTopic, worker.deadLetterTopic)] where read.contains(written) {
            let location = whereWritten(setting)
            problem(
                .invalidValue, location,
                "\(location) is \"\(written)\", a topic the worker also reads requests from: its own output would come back as jobs; name another topic.")
        }
    }
}
