import Licensing
import Wire

/// A period log entry as one sorted-set member: `<order>|<start ms or ->|<end ms or ->|<asset hex>`,
/// decimal numbers, so the member of one period is the same bytes whoever writes it.
extension PackagerPeriodEntry {
    /// The member text.
    var redisMember: String {
        "\(order)|\(startMilliseconds.map { String($0) } ?? "-")|\(endMilliseconds.map { String($0) } ?? "-")|\(HexEncoding.encode(assetID))"
    }

    /// Decodes a member; nil when it is not four `|`-separated parts of the right kinds.
    init?(redisMember bytes: [UInt8]) {
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        let parts = text.split(separator: "|", omittingEmptySubsequences: false)
        guard parts.count == 4, let order = Int64(parts[0]), let asset = HexEncoding.decode(parts[3]), !asset.isEmpty else { return nil }
        func time(_ part: Substring) -> Int64?? {
            if part == "-" { return .some(nil) }
            guard let value = Int64(part), value >= 0 else { return nil }
            return .some(value)
        }
        guard let start = time(parts[1]), let end = time(parts[2]) else { return nil }
        self.init(order: order, startMilliseconds: start, endMilliseconds: end, assetID: asset)
    }
}
