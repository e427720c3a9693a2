import KSMService

/// `--log-format`: swift-log's text lines or ``JSONLogHandler``'s JSON lines.
public enum LogFormat: String, Sendable, CaseIterable {
    case text, json
}
