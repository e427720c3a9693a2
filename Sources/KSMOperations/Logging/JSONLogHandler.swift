import Foundation
import KSMService
import Logging

/// A swift-log handler that writes one JSON object per line, for log shippers (`ksm serve
/// --log-format json`):
///
/// `{"timestamp":"2026-05-01T20:00:00.123Z","level":"info","label":"ksm.worker","message":"...",
///   "request_id":"r-1","tenant":"acme","status":"noErr","rule":"lease",...}`
///
/// Metadata keys come out flat; the project's `fps.` prefix is dropped for the common ones (request
/// ID, tenant, status, rule, reason) so a query reads `request_id` in every line. Values are the
/// strings the code logged: the same lines, and so the same secrets discipline, as the text
/// format (no key, SPC or CKC is ever put in metadata). One `write` per line under a lock, so lines
/// from concurrent tasks never interleave.
package struct JSONLogHandler: LogHandler {
    package var logLevel: Logger.Level = .info
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?
    let label: String
    let output: JSONLogOutput

    package init(label: String, output: JSONLogOutput = .standardError, metadataProvider: Logger.MetadataProvider? = nil) {
        self.label = label
        self.output = output
        self.metadataProvider = metadataProvider
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        var line = "{\"timestamp\":\"\(Self.timestamp())\",\"level\":\"\(event.level.rawValue)\",\"label\":"
        Self.appendString(label, to: &line)
        line += ",\"message\":"
        Self.appendString(event.message.description, to: &line)
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            let name = Self.renamed[key] ?? key
            guard !Self.reserved.contains(name) else { continue }
            line += ","
            Self.appendString(name, to: &line)
            line += ":"
            Self.append(value, to: &line)
        }
        if event.level >= .warning {
            line += ",\"source\":"
            Self.appendString("\(event.file):\(event.line)", to: &line)
        }
        line += "}\n"
        output.write(line)
    }

    /// The project's metadata keys (docs/worker.md, "Logging") under their short JSON names.
    static let renamed: [String: String] = [
        LoggingKeys.requestID: "request_id", LoggingKeys.tenant: "tenant", LoggingKeys.status: "status",
        LoggingKeys.rule: "rule", LoggingKeys.reason: "reason", LoggingKeys.leaseExpiresAt: "lease_expires_at",
    ]
    /// Field names the handler writes itself; metadata cannot overwrite them.
    static let reserved: Set<String> = ["timestamp", "level", "label", "message", "source"]

    static func append(_ value: Logger.Metadata.Value, to line: inout String) {
        switch value {
        case .string(let s): appendString(s, to: &line)
        case .stringConvertible(let c): appendString(c.description, to: &line)
        case .array(let values):
            line += "["
            for (index, v) in values.enumerated() {
                if index > 0 { line += "," }
                append(v, to: &line)
            }
            line += "]"
        case .dictionary(let values):
            line += "{"
            for (index, (k, v)) in values.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { line += "," }
                appendString(k, to: &line)
                line += ":"
                append(v, to: &line)
            }
            line += "}"
        }
    }

    /// A JSON string literal (RFC 8259, section 7): quote, backslash and control characters escaped.
    static func appendString(_ s: String, to line: inout String) {
        line += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": line += "\\\""
            case "\\": line += "\\\\"
            case "\n": line += "\\n"
            case "\r": line += "\\r"
            case "\t": line += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                line += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: line.unicodeScalars.append(scalar)
            }
        }
        line += "\""
    }

    /// RFC 3339 in UTC with milliseconds.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let millis = Int(now.tv_nsec / 1_000_000)
        let ms = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(ms)Z"
    }
}
