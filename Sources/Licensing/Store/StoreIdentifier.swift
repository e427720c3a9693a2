import Wire

/// A validated name used inside store keys: a tenant, an account, or a request ID.
///
/// Identifiers become parts of Redis key names and hash tags (`fps:{t:<tenant>:a:<account>}:slots`),
/// so characters that would change a key's meaning are refused: `{` and `}` (hash-tag delimiters),
/// `:` (the key separator; allowing it would let tenant `a:a:b` collide with tenant `a`, account
/// `b`), white space and control characters. Length is 1...128 UTF-8 bytes.
///
/// Identity is the bytes: equality, hashing and order are those of the UTF-8 bytes (``ByteKey``),
/// never `String`'s canonical equivalence. Redis keys are byte strings, so the NFC tenant `"café"`
/// (`caf` U+00E9) and the NFD one (`cafe` U+0301) are two tenants there; every cache, per-batch
/// ledger and check keyed by an identifier keeps them apart too. No normalization is applied.
public struct StoreIdentifier: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The validated text.
    public let value: String

    /// The maximum length in UTF-8 bytes.
    public static let maximumLength = 128

    /// Validates `value`; throws `.invalidIdentifier` naming the reason (the value itself is quoted
    /// only when it is short, so a garbage payload cannot flood a log line).
    public init(_ value: String) throws(LicenseStoreError) {
        let utf8 = value.utf8
        guard !utf8.isEmpty, utf8.count <= Self.maximumLength else {
            throw LicenseStoreError(.invalidIdentifier, "identifier length \(utf8.count) is not in 1...\(Self.maximumLength)")
        }
        for byte in utf8
        where byte <= 0x20 || byte == 0x7F || byte == UInt8(ascii: "{")
            || byte == UInt8(ascii: "}") || byte == UInt8(ascii: ":")
        {
            throw LicenseStoreError(.invalidIdentifier, "identifier \"\(value)\" contains a reserved character")
        }
        self.value = value
    }

    public var description: String { value }

    /// Same UTF-8 bytes (canonically equivalent text with other bytes is another identifier).
    public static func == (lhs: Self, rhs: Self) -> Bool { ByteKey.equal(lhs.value, rhs.value) }

    public func hash(into hasher: inout Hasher) { ByteKey.hash(value, into: &hasher) }

    /// Byte order of the UTF-8 encodings.
    public static func < (lhs: Self, rhs: Self) -> Bool { ByteKey.precedes(lhs.value, rhs.value) }
}
