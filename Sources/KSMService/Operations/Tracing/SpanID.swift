/// A W3C / OpenTelemetry span ID (the `parent-id` of a `traceparent`): 8 bytes, written as 16
/// lowercase hex digits, never all zero.
public struct SpanID: Hashable, Sendable, CustomStringConvertible {
    /// The 8 bytes, big-endian.
    public var value: UInt64

    /// - Precondition: none; a zero value is representable but never produced by ``random()`` or
    ///   accepted by ``init(hex:)``.
    public init(_ value: UInt64) { self.value = value }

    /// Parses 16 lowercase hex digits; nil for any other input and for the all-zero ID (W3C Trace
    /// Context 3.2.2.4).
    public init?(hex: some Collection<UInt8>) {
        guard hex.count == 16, let value = HexDigits.uint64(hex), value != 0 else { return nil }
        self.value = value
    }

    /// A random ID from the system's generator, redrawn in the (2^-64) case it came out zero.
    public static func random() -> SpanID {
        var generator = SystemRandomNumberGenerator()
        while true {
            let value: UInt64 = generator.next()
            if value != 0 { return SpanID(value) }
        }
    }

    /// 16 lowercase hex digits, as in `traceparent` and OTLP JSON.
    public var hexString: String { HexDigits.string(value) }

    public var description: String { hexString }
}
