import Licensing
import Wire

/// The schedule as flat text fields: the Redis hash `fps:{t:<tenant>}:rot:<asset>` stores exactly
/// these.
///
/// Fields: `boundary` (ms since 1970, decimal), `next_asset` (hex), `current_period` and
/// `next_period` (identifiers, absent when unset), `keys` (decimal, default 1).
extension RotationSchedule {
    /// The hash fields to store, in a fixed order.
    package var fields: [(String, String)] {
        var out: [(String, String)] = [
            ("boundary", String(boundaryMilliseconds)), ("next_asset", HexEncoding.encode(nextAssetID)), ("keys", String(keysPerViewer)),
        ]
        if let currentPeriod { out.append(("current_period", currentPeriod.value)) }
        if let nextPeriod { out.append(("next_period", nextPeriod.value)) }
        return out
    }

    /// Decodes a stored record.
    /// - Throws: `.corruptRecord` when `boundary` or `next_asset` is missing or malformed, a period
    ///   is not a valid identifier, or `keys` is not in 1...64.
    package init(tenant: StoreIdentifier, assetID: [UInt8], fields: [String: String]) throws(LicenseStoreError) {
        func corrupt(_ what: String) -> LicenseStoreError {
            LicenseStoreError(.corruptRecord, "rotation schedule of \(tenant)/\(HexEncoding.encode(assetID)): \(what)")
        }
        guard let boundaryText = fields["boundary"], let boundary = Int64(boundaryText), boundary >= 0 else { throw corrupt("bad or missing boundary") }
        guard let nextHex = fields["next_asset"], let next = HexEncoding.decode(nextHex), !next.isEmpty else { throw corrupt("bad or missing next_asset") }
        var keys = 1
        if let text = fields["keys"] {
            guard let n = Int(text), (1...64).contains(n) else { throw corrupt("keys is not in 1...64") }
            keys = n
        }
        func period(_ name: String) throws(LicenseStoreError) -> StoreIdentifier? {
            guard let text = fields[name] else { return nil }
            do { return try StoreIdentifier(text) } catch { throw corrupt("\(name) is not a valid identifier") }
        }
        self.init(
            tenant: tenant, assetID: assetID, currentPeriod: try period("current_period"), nextAssetID: next,
            nextPeriod: try period("next_period"), boundaryMilliseconds: boundary, keysPerViewer: keys)
    }
}
