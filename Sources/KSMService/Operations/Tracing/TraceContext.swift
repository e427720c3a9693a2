/// One span's W3C trace context: what a `traceparent` / `tracestate` pair carries, and what
/// ``OTelTracer`` keeps in a `ServiceContext` for each span it starts.
///
/// Only the `sampled` bit of the trace flags is kept: it is the one flag version 00 defines, and
/// passing unknown bits on is not allowed for a version-00 header we write (W3C Trace Context 3.2.2.5).
public struct TraceContext: Hashable, Sendable {
    public var traceID: TraceID
    public var spanID: SpanID
    /// The `sampled` trace flag: the caller records this trace (parent-based sampling honours it).
    public var isSampled: Bool
    /// The vendor list passed along untouched, nil when there was none or it was malformed.
    public var traceState: String?
    /// True when the context came from another process (a Kafka header), false for a span of ours.
    public var isRemote: Bool

    /// The longest `tracestate` kept: the W3C spec lets a vendor drop a longer one (section 3.3.1.5).
    public static let maximumTraceStateLength = 512

    public init(traceID: TraceID, spanID: SpanID, isSampled: Bool, traceState: String? = nil, isRemote: Bool = false) {
        self.traceID = traceID
        self.spanID = spanID
        self.isSampled = isSampled
        self.traceState = traceState
        self.isRemote = isRemote
    }

    /// Parses a `traceparent` (and its `tracestate`) as received: `version-traceid-parentid-flags`
    /// in lowercase hex (W3C Trace Context 3.2), 2-32-16-2 digits. Returns nil, and the caller
    /// starts a new trace, when the header is malformed, the version is `ff`, a version-00 header
    /// has anything after the flags, or either ID is all zeros. A later version may append fields
    /// after a dash; they are ignored (3.2.4). A malformed or too long `tracestate` is dropped alone.
    public init?(traceparent bytes: some Collection<UInt8>, tracestate: (some Collection<UInt8>)? = [UInt8]?.none) {
        let bytes = Array(bytes)
        guard bytes.count >= 55, bytes[2] == UInt8(ascii: "-"), bytes[35] == UInt8(ascii: "-"), bytes[52] == UInt8(ascii: "-"),
              let version = HexDigits.uint64(bytes[0..<2]), version != 0xFF,
              version != 0 ? (bytes.count == 55 || bytes[55] == UInt8(ascii: "-")) : bytes.count == 55,
              let traceID = TraceID(hex: bytes[3..<35]), let spanID = SpanID(hex: bytes[36..<52]),
              let flags = HexDigits.uint64(bytes[53..<55])
        else { return nil }
        self.init(traceID: traceID, spanID: spanID, isSampled: flags & 0x01 != 0, isRemote: true)
        if let tracestate, !tracestate.isEmpty, tracestate.count <= Self.maximumTraceStateLength,
           tracestate.allSatisfy({ (0x20...0x7E).contains($0) }) {
            traceState = String(decoding: tracestate, as: UTF8.self)
        }
    }

    /// `00-traceid-spanid-flags`, the version this tracer writes.
    public var traceparent: String {
        "00-\(traceID.hexString)-\(spanID.hexString)-\(isSampled ? "01" : "00")"
    }
}
