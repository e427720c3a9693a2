import ArgumentParser
import Foundation
import KSMOperations
import KSMService
import Licensing

/// A failure after the command line was parsed: printed as sentences on standard error, without the
/// usage text (which only helps with a malformed command line), and turned into an exit status.
///
/// Exit statuses: 64 (`EX_USAGE`) for a command line or configuration mistake, 1 for a failure at
/// run time (a file that cannot be used, a service that cannot be reached).
enum CommandFailure: Error {
    case configuration([String])
    case runtime(String)

    var exitCode: Int32 {
        switch self {
        case .configuration: ServeConfigurationError.exitCode
        case .runtime: 1
        }
    }

    var lines: [String] {
        switch self {
        case .configuration(let problems): problems
        case .runtime(let message): [message]
        }
    }

    /// Writes the message to standard error and exits through swift-argument-parser with the status.
    func report(command: String) -> ExitCode {
        let text = lines.map { "ksm \(command): error: \($0)" }.joined(separator: "\n") + "\n"
        FileHandle.standardError.write(Data(text.utf8))
        return ExitCode(exitCode)
    }

    /// A sentence for a person from any error: the message an error type carries, never a Swift debug
    /// description or a source location.
    static func sentence(for error: any Error) -> String {
        let text: String
        if let failure = error as? CommandFailure {
            text = failure.lines.joined(separator: " ")
        } else if let validation = error as? ValidationError {
            text = validation.message
        } else if let store = error as? LicenseStoreError {
            text = store.message
        } else if let described = error as? CustomStringConvertible {
            text = described.description
        } else {
            text = "an unexpected \(type(of: error)) error"
        }
        return clean(text)
    }

    /// Drops source locations (` at Kafka/RdKafkaConfig.swift:23`) and capitalizes and ends the sentence.
    static func clean(_ text: String) -> String {
        var cleaned = text.replacingOccurrences(of: #"\s*\(?\bat [A-Za-z0-9_/+.-]+\.swift:\d+\)?"#, with: "", options: .regularExpression)
        cleaned = cleaned.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let first = cleaned.first else { return "An unknown error occurred." }
        cleaned = first.uppercased() + cleaned.dropFirst()
        if let last = cleaned.last, !".!?".contains(last) { cleaned += "." }
        return cleaned
    }
}
