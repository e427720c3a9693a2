/// A content key as the issuing side hands it to ``SpekeResponseWriter``: what the packager
/// encrypts with and what the KSM's workers later put in the CKC for the same asset.
///
/// - `key`: the 16-byte AES-128 content key.
/// - `iv`: the 16-byte IV. The packager encrypts with the response's `explicitIV` and FairPlay
///   delivers the IV in the CKC, not in the playlist, so this must be the IV the workers put in the
///   CKC for ``skdURI``. When the request carried `ContentKey@explicitIV`, it must be that IV (the
///   writer refuses a different one rather than answer a key the player could not decrypt with).
/// - `skdURI`: the `skd://` URI of the playlist's `EXT-X-KEY`; the player hands it to the app,
///   which sends it in the SPC as the asset ID, so it is the string the key is stored or derived
///   under (docs/key-seeds.md: the asset ID is the URI "exactly as the SPC carries" it).
package struct IssuedKey: Sendable, Hashable {
    package let key: [UInt8]
    package let iv: [UInt8]
    package let skdURI: String

    /// - Throws: `keyIssuing` (500) unless `key` and `iv` are 16 bytes each and `skdURI` starts with
    ///   `skd://` and fits in an HLS quoted-string (no `"`, no CR or LF: RFC 8216, section 4.2).
    package init(key: [UInt8], iv: [UInt8], skdURI: String) throws(SpekeError) {
        guard key.count == 16 else { throw .keyIssuing("a content key must be 16 bytes, got \(key.count)") }
        guard iv.count == 16 else { throw .keyIssuing("a content IV must be 16 bytes, got \(iv.count)") }
        guard skdURI.hasPrefix("skd://"), skdURI.count > 6 else { throw .keyIssuing("the key URI must start with skd://") }
        guard !skdURI.contains(where: { $0 == "\"" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) else {
            throw .keyIssuing("the key URI holds a quote or a line break, which an HLS attribute cannot carry")
        }
        self.key = key
        self.iv = iv
        self.skdURI = skdURI
    }
}
