import FairPlay
import KSMService

/// librdkafka properties whose values are read from files (`--kafka-property-file NAME=PATH`,
/// `KSM_KAFKA_PROPERTY_FILES`, `"kafka-property-files"`): how a SASL password or an OAuth client
/// secret reaches the worker without ever being in its arguments (`/proc/PID/cmdline`, readable by
/// every user of the host) or its environment (`/proc/PID/environ`, inherited by children).
///
/// Each file is a secret file: read with ``SecretFile``'s rule (owner only, or group-readable for a
/// group this process holds, as a Kubernetes Secret volume with `fsGroup` mounts it), its whole
/// content the value, less one trailing line break (`\n` or `\r\n`), which `echo` and editors add.
/// No message ever quotes a file's content: problems name the property and the path.
package enum KafkaPropertyFiles {
    /// One file that could not become a property.
    package struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        package var property: String
        package var path: String
        package var reason: String
        package var description: String { "librdkafka property \(property) from \(path): \(reason)" }
    }

    /// Reads every file; properties by name, and a problem for each file that could not be used.
    ///
    /// - Parameters:
    ///   - files: property name to file path.
    ///   - inline: the properties given with their values (`--kafka-property`); a property given both
    ///     ways is a problem, never a silent choice of one.
    package static func read(_ files: [String: String], inline: [String: String] = [:], access: SecretFileAccess = .ownerOnly)
        -> (properties: [String: String], problems: [Problem])
    {
        var properties: [String: String] = [:]
        var problems: [Problem] = []
        for (property, path) in files.sorted(by: { $0.key < $1.key }) {
            if inline[property] != nil {
                problems.append(
                    Problem(
                        property: property, path: path,
                        reason: "also given with a value (kafka-properties); give it once, as a file when it is a secret"))
                continue
            }
            guard !path.isEmpty else {
                problems.append(Problem(property: property, path: "\"\"", reason: "no file named; write it as \(property)=PATH"))
                continue
            }
            do {
                var bytes = try SecretFile.read(path, access: access)
                defer { FairPlayCrypto.cleanse(&bytes) }
                let value = value(of: bytes)
                guard let value, !value.isEmpty else {
                    problems.append(
                        Problem(
                            property: property, path: path,
                            reason: value == nil ? "the file is not UTF-8 text" : "the file is empty"))
                    continue
                }
                properties[property] = value
            } catch {
                problems.append(Problem(property: property, path: path, reason: error.reason))
            }
        }
        return (properties, problems)
    }

    /// The file's text less one trailing `\n` or `\r\n`; nil when it is not UTF-8 or holds a NUL
    /// (librdkafka takes C strings: the value would be cut short there).
    static func value(of bytes: [UInt8]) -> String? {
        var end = bytes.endIndex
        if end > 0, bytes[end - 1] == 0x0A {
            end -= 1
            if end > 0, bytes[end - 1] == 0x0D { end -= 1 }
        }
        let body = bytes[..<end]
        guard !body.contains(0), let text = String(validating: body, as: UTF8.self) else { return nil }
        return text
    }
}
