import Wire

/// The `skd://` URI a key provider writes into the playlist for a key, which is also the asset ID
/// the device puts in its SPC, and so the name under which workers find the key:
///
/// ```
/// skd://<content ID>/<period name>/<KID, 32 lower-case hex digits>     a key of a key period
/// skd://<content ID>/<KID, 32 lower-case hex digits>                   a key without periods (VOD)
/// ```
///
/// The content ID and period name are percent-encoded (every byte outside `A-Z a-z 0-9 - . _ ~`
/// as `%XX`, upper-case hex), so neither can hold a `/`: the segments cannot run together, and
/// each (content, period, KID) has exactly one URI. The KID is in the URI because a packager gives
/// each key of one period its own KID (audio, SD, HD...), and the period because SPEKE lets a KID
/// repeat across periods. The tenant is not: the worker takes it from the job, and each tenant's
/// keys live under its own names in the store.
package enum PackagerAssetID {
    /// The URI for (content, period, KID).
    package static func uri(contentID: String, periodName: String?, keyID: [UInt8]) -> String {
        var uri = "skd://" + percentEncoded(contentID) + "/"
        if let periodName { uri += percentEncoded(periodName) + "/" }
        return uri + HexEncoding.encode(keyID)
    }

    /// `text`'s UTF-8 with every byte outside RFC 3986's unreserved set as `%XX`.
    package static func percentEncoded(_ text: String) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
