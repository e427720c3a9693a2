import Licensing
import Wire

/// How a stored answer sits in Redis: `sha256:<64 hex digits>\n` and then the reply bytes, readable
/// in `redis-cli`. A value without the prefix is a bare reply stored by an earlier release: it has no
/// digest, so it answers any redelivery of its job ID, as it did then.
extension StoredAnswer {
    private static let prefix = Array("sha256:".utf8)
    /// Prefix, 64 hex digits, newline.
    private static let headerLength = 7 + 64 + 1

    var redisValue: [UInt8] {
        guard let requestDigest, requestDigest.count == 32 else { return bytes }
        var value = Self.prefix
        value.reserveCapacity(Self.headerLength + bytes.count)
        HexEncoding.append(requestDigest, to: &value)
        value.append(UInt8(ascii: "\n"))
        value += bytes
        return value
    }

    init(redisValue value: [UInt8]) {
        guard value.count >= Self.headerLength, value.starts(with: Self.prefix), value[Self.headerLength - 1] == UInt8(ascii: "\n"),
            let digest = HexEncoding.decode(String(decoding: value[Self.prefix.count..<Self.headerLength - 1], as: UTF8.self))
        else {
            self.init(bytes: value, requestDigest: nil)
            return
        }
        self.init(bytes: Array(value[Self.headerLength...]), requestDigest: digest)
    }
}
