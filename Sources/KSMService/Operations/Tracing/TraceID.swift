/// A W3C / OpenTelemetry trace ID: 16 bytes, written as 32 lowercase hex digits, never all zero.
///
/// Held as two integers rather than an array so a span's identity costs no allocation.
public struct TraceID: Hashable, Sendable, CustomStringConvertible {
    /// The first 8 bytes, big-endian.
    public var high: UInt64
    /// The last 8 bytes, big-endian. The ratio sampler reads these (``TraceSampler``).
    public var low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Parses 32 lowercase hex digits (uppercase is invalid in a `traceparent`, W3C Trace Context
    /// 3.2.2.3). Returns nil for any other length or character, and for the all-zero ID, which the
    /// spec reserves as invalid.
    public init?(hex: some Collection<UInt8>) {
        guard hex.count == 32, let high = HexDigits.uint64(hex.prefix(16)), let low = HexDigits.uint64(hex.dropFirst(16)),
              high != 0 || low != 0 else { return nil }
        self.init(high: high, low: low)
    }

    /// A random ID from the system's generator, redrawn in the (2^-128) case it came out all zero.
    public static func random() -> TraceID {
        var generator = SystemRandomNumberGenerator()
        while true {
            let id = TraceID(high: generator.next(), low: generator.next())
            if id.high != 0 || id.low != 0 { return id }
        }
    }

    /// 32 lowercase hex digits, as in `traceparent` and OTLP JSON.
    public var hexString: String { HexDigits.string(high) + HexDigits.string(low) }

    public var description: String { hexString }
}
