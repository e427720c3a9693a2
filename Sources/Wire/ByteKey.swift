#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Text or bytes compared, hashed and ordered by their exact bytes (for text: its UTF-8 bytes).
///
/// Swift's `String` compares and hashes by Unicode canonical equivalence: the NFC `"é"` (U+00E9)
/// and the NFD `"e"` + U+0301 are one `String` key, while Redis, Kafka and every peer see two byte
/// strings. Tenant, account, job and key IDs, key periods and asset IDs name things by their bytes,
/// so whatever keys a cache, a ledger or a check by one of them goes through this type (or through
/// a type built on its static helpers, as Licensing's `StoreIdentifier` is), never through
/// `String`'s `==`.
///
/// Display: ``description`` is the text when the bytes are UTF-8 without control characters, else
/// `0x` and the bytes in lowercase hex, so two different byte strings never print alike as text.
package struct ByteKey: Sendable, Hashable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The exact bytes.
    package let bytes: [UInt8]

    /// The UTF-8 bytes of `text`, as they are (no normalization).
    package init(_ text: some StringProtocol) {
        bytes = Array(text.utf8)
    }

    package init(bytes: some Sequence<UInt8>) {
        self.bytes = Array(bytes)
    }

    package init(stringLiteral value: String) {
        self.init(value)
    }

    package static func == (lhs: Self, rhs: Self) -> Bool { lhs.bytes == rhs.bytes }

    package func hash(into hasher: inout Hasher) { Self.hash(bytes: bytes, into: &hasher) }

    /// Lexicographic by byte (for valid UTF-8, the order of the code points).
    package static func < (lhs: Self, rhs: Self) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }

    package var description: String { Self.displayText(bytes) }

    // MARK: The rule for text kept as `String`

    /// True when `lhs` and `rhs` have the same UTF-8 bytes (canonically equivalent text with other
    /// bytes is not equal).
    package static func equal(_ lhs: some StringProtocol, _ rhs: some StringProtocol) -> Bool {
        // The count first: O(1) for native strings, and most unequal identifiers differ in length.
        guard lhs.utf8.count == rhs.utf8.count else { return false }
        // Native strings hold contiguous UTF-8: one memcmp. The generic `elementsEqual` is not
        // specialized across modules and walks the bytes through witness tables: 3 % of a worker's
        // CPU under `ksm bench http` (perf), where dictionaries keyed by one account (anonymous
        // traffic) compare that key on every lookup.
        let compared = lhs.utf8.withContiguousStorageIfAvailable { left in
            rhs.utf8.withContiguousStorageIfAvailable { right in
                guard let l = left.baseAddress, let r = right.baseAddress else { return left.count == right.count }
                return memcmp(l, r, left.count) == 0
            }
        }
        if let compared, let same = compared { return same }
        return lhs.utf8.elementsEqual(rhs.utf8)
    }

    /// Byte order of the UTF-8 encodings.
    package static func precedes(_ lhs: some StringProtocol, _ rhs: some StringProtocol) -> Bool {
        lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }

    /// Feeds the UTF-8 bytes of `text` to `hasher`, exactly as ``hash(into:)`` feeds a key of the
    /// same bytes.
    package static func hash(_ text: some StringProtocol, into hasher: inout Hasher) {
        let utf8 = text.utf8
        let fed: Void? = utf8.withContiguousStorageIfAvailable { hash(bytes: $0, into: &hasher) }
        if fed == nil { hash(bytes: Array(utf8), into: &hasher) }
    }

    /// The length, then the bytes as one block (so `("ab", "c")` and `("a", "bc")` hash apart).
    package static func hash(bytes: some Collection<UInt8>, into hasher: inout Hasher) {
        let fed: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            hasher.combine(buffer.count)
            hasher.combine(bytes: UnsafeRawBufferPointer(buffer))
        }
        if fed == nil { hash(bytes: Array(bytes), into: &hasher) }
    }

    /// True when `bytes` starts with `prefix`, byte for byte.
    package static func hasPrefix(_ bytes: some Collection<UInt8>, _ prefix: some Collection<UInt8>) -> Bool {
        bytes.count >= prefix.count && bytes.prefix(prefix.count).elementsEqual(prefix)
    }

    /// The bytes as text when they are UTF-8 without control characters (U+0000...U+001F, U+007F),
    /// else `0x` and lowercase hex: the one way an identifier or asset ID that may not be text is shown.
    package static func displayText(_ bytes: some Collection<UInt8>) -> String {
        if let text = String(validating: bytes, as: UTF8.self), !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return text
        }
        return "0x" + HexEncoding.encode(bytes)
    }
}
