import Licensing

/// The lease scripts' reply text, also kept as the idempotency record of a lease: a ``LeaseResult``
/// in one short string, so one script answers a whole batch in one bulk string per request.
extension LeaseResult {
    /// The text form:
    /// `g:<ms>`, `r:<ms>`, `x:<reason>:<active>:<limit>`, `g:<ms>:<ended member>`, `h:<ms>`, `n`.
    package var encoded: String {
        switch self {
        case .granted(let at): "g:\(at)"
        case .renewed(let at): "r:\(at)"
        case .refused(let reason, let active, let limit): "x:\(reason):\(active):\(limit)"
        case .grantedEndingOldest(let at, let ended): "g:\(at):\(ended)"
        case .held(let at): "h:\(at)"
        case .recorded: "n"
        }
    }

    /// Parses ``encoded``; nil if malformed. Reads the UTF-8 bytes in one pass (every lease of a
    /// storm comes back through here): no split into substrings, no generic integer parsing.
    package init?(encoded: some StringProtocol) {
        var text = String(encoded)
        let parsed: LeaseResult? = text.withUTF8 { Self.parse($0) }
        guard let parsed else { return nil }
        self = parsed
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> LeaseResult? {
        let colon = UInt8(ascii: ":")
        guard let tag = bytes.first else { return nil }
        if tag == UInt8(ascii: "n") { return bytes.count == 1 ? .recorded : nil }
        guard bytes.count > 2, bytes[1] == colon else { return nil }
        // The colon-separated fields after the tag, as index ranges.
        var fields: [Range<Int>] = []
        var start = 2
        for i in 2...bytes.count where i == bytes.count || bytes[i] == colon {
            fields.append(start..<i)
            start = i + 1
        }
        func integer(_ range: Range<Int>) -> Int64? {
            guard !range.isEmpty, range.count <= 18 else { return nil }
            var value: Int64 = 0
            for i in range {
                let digit = bytes[i] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                value = value * 10 + Int64(digit)
            }
            return value
        }
        func string(_ range: Range<Int>) -> String { String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self) }
        switch (tag, fields.count) {
        case (UInt8(ascii: "g"), 1):
            return integer(fields[0]).map { .granted(expiresAtMilliseconds: $0) }
        case (UInt8(ascii: "g"), 2):
            guard let at = integer(fields[0]), !fields[1].isEmpty else { return nil }
            return .grantedEndingOldest(expiresAtMilliseconds: at, ended: string(fields[1]))
        case (UInt8(ascii: "h"), 1):
            return integer(fields[0]).map { .held(expiresAtMilliseconds: $0) }
        case (UInt8(ascii: "r"), 1):
            return integer(fields[0]).map { .renewed(expiresAtMilliseconds: $0) }
        case (UInt8(ascii: "x"), 3):
            guard let active = integer(fields[1]), let limit = integer(fields[2]) else { return nil }
            return .refused(reason: LeaseRefusalReason(string(fields[0])), activeCount: Int(active), limit: Int(limit))
        default:
            return nil
        }
    }
}
