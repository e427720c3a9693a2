import KSMService

/// `--log-format`: swift-log's text lines or ``JSONLogHandler``'s JSON lines.
package enum LogFormat: String, Sendable, CaseIterable {
    case text, json
}
