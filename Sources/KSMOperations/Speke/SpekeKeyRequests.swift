import Foundation
import KSMService
import Licensing
import Speke

/// The keys a SPEKE request asks for, as ``PackagerKeyIssuer`` takes them: per `ContentKey`, the
/// content ID, its key period (from the usage rules' `KeyPeriodFilter`), its KID, the intended
/// track type of its usage rule and its `explicitIV`.
package enum SpekeKeyRequests {
    /// One ``PackagerKeyRequest`` per requested key, in request order.
    /// - Throws: ``SpekeError`` (422) when a key cannot be issued as asked: a KID filtered on more
    ///   than one key period (the answer holds one key per KID, and a period's key is its own), a
    ///   period index or time out of range, a track type or content ID the issuer refuses.
    package static func requests(for request: SpekeRequest, tenant: StoreIdentifier) throws(SpekeError) -> [PackagerKeyRequest] {
        var requests: [PackagerKeyRequest] = []
        requests.reserveCapacity(request.contentKeys.count)
        for key in request.contentKeys {
            let periods = request.periods(for: key.kid)
            guard periods.count <= 1 else {
                throw invalid("KID \(key.kidText) is filtered on \(periods.count) key periods; a KID belongs to one period")
            }
            let period = try periods.first.map { (period) throws(SpekeError) in try keyPeriod(period) }
            let trackText = request.usageRules(for: key.kid).first?.intendedTrackType
            do throws(PackagerKeyIssuerError) {
                let trackType = try trackText.map { (text) throws(PackagerKeyIssuerError) in try IntendedTrackType(text) }
                requests.append(
                    try PackagerKeyRequest(
                        tenant: tenant, contentID: request.contentID, keyPeriod: period, keyID: key.kid.bytes, trackType: trackType,
                        explicitIV: key.explicitIV))
            } catch {
                throw invalid("KID \(key.kidText): \(error.message)")
            }
        }
        return requests
    }

    /// The period as the issuer names it: its index, and from SPEKE v2.1 its start and end.
    static func keyPeriod(_ period: ContentKeyPeriod) throws(SpekeError) -> PackagerKeyPeriod {
        var index: Int64? = nil
        if let value = period.index {
            guard let exact = Int64(exactly: value) else { throw invalid("ContentKeyPeriod \(period.id) has an index above \(Int64.max)") }
            index = exact
        }
        let start = try period.start.map { (text) throws(SpekeError) in try milliseconds(text, "start", period) }
        let end = try period.end.map { (text) throws(SpekeError) in try milliseconds(text, "end", period) }
        do throws(PackagerKeyIssuerError) {
            return try PackagerKeyPeriod(index: index, startMilliseconds: start, endMilliseconds: end)
        } catch {
            throw invalid("ContentKeyPeriod \(period.id): \(error.message)")
        }
    }

    /// An xs:dateTime (`2026-11-28T12:00:00Z`, fractions and offsets allowed) in ms since 1970.
    static func milliseconds(_ text: String, _ attribute: String, _ period: ContentKeyPeriod) throws(SpekeError) -> Int64 {
        let plain = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = plain.date(from: text) ?? fractional.date(from: text) else {
            throw invalid("ContentKeyPeriod \(period.id) has an @\(attribute) that is not an xs:dateTime with a time zone")
        }
        return Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// A request the issuer cannot serve, in the error table's style (ours, not AWS's wording).
    static func invalid(_ detail: String) -> SpekeError {
        SpekeError(.malformedDocument, "Invalid key request: \(detail)")
    }
}
