import FairPlay
import Licensing
import Speke
import Wire

/// What `ksm admin export-cpix` asks for, and the SPEKE request document it becomes.
///
/// An export is a SPEKE request the key provider makes to itself (v2.0, or v2.1 when a period is
/// given by its times alone): this type writes the request a packager would send (CPIX 2.3, `cbcs`, one FairPlay `DRMSystem` per key asking for
/// `URIExtXKey` and the media and master `HLSSignalingData`, a `ContentKeyPeriodList` and a
/// `KeyPeriodFilter` per rule when periods are given, a `DeliveryDataList` when the keys are to be
/// encrypted), and ``SpekeRequest`` reads it with the same rules as a packager's. The keys and the
/// answer then come from the same path `ksm speke` answers with, so an export and a SPEKE request
/// for the same (content, period, KID) get the same key.
///
/// Keys are listed period by period, and within a period in the order of ``trackTypes``.
package struct CPIXExportRequest: Sendable, Hashable {
    /// The tenant whose keys are issued.
    package var tenant: StoreIdentifier
    /// `CPIX@contentId`.
    package var contentID: String
    /// The key periods; empty for one key per track without periods (VOD).
    package var periods: [CPIXExportPeriod]
    /// `intendedTrackType` of each key of a period (``CPIXTrackFilter`` names). Default: `VIDEO`
    /// and `AUDIO`, a key for each.
    package var trackTypes: [String]
    /// The KIDs, one per (period, track) in key order; nil derives them
    /// (``derivedKeyID(tenant:contentID:periodName:trackType:)``).
    package var keyIDs: [KID]?
    /// The DER certificate to encrypt the keys for; nil writes them in the clear.
    package var recipientCertificateDER: [UInt8]?

    /// The track types exported when none is given.
    package static let defaultTrackTypes = ["VIDEO", "AUDIO"]

    package init(
        tenant: StoreIdentifier, contentID: String, periods: [CPIXExportPeriod] = [], trackTypes: [String] = defaultTrackTypes, keyIDs: [KID]? = nil,
        recipientCertificateDER: [UInt8]? = nil
    ) {
        self.tenant = tenant
        self.contentID = contentID
        self.periods = periods
        self.trackTypes = trackTypes
        self.keyIDs = keyIDs
        self.recipientCertificateDER = recipientCertificateDER
    }

    /// One key of the export: its period (nil without periods), track type and KID.
    package struct Slot: Sendable, Hashable {
        /// The key's period; nil without periods.
        package var period: CPIXExportPeriod?
        /// `ContentKeyPeriod@id` of ``period``.
        package var periodID: String?
        /// `ContentKeyUsageRule@intendedTrackType`.
        package var trackType: String
        /// `ContentKey@kid`.
        package var keyID: KID
    }

    /// The keys in document order.
    /// - Throws: `.invalidArgument` for no track, a track type twice, `ALL` beside another track
    ///   type, a period twice or one whose times do not read, or a number of KIDs other than
    ///   periods x tracks (or a KID twice).
    package func slots() throws(CPIXFileError) -> [Slot] {
        guard !trackTypes.isEmpty else { throw CPIXFileError(.invalidArgument, "no track type: give --track, e.g. --track VIDEO --track AUDIO") }
        guard Set(trackTypes).count == trackTypes.count else {
            throw CPIXFileError(.invalidArgument, "a track type is given twice; each track type has one key per period")
        }
        guard !trackTypes.contains("ALL") || trackTypes.count == 1 else {
            throw CPIXFileError(.invalidArgument, "track type ALL is one key for every track; it cannot be given with other track types")
        }
        let names = try periods.map { period throws(CPIXFileError) in try period.name() }
        guard Set(names).count == names.count else {
            throw CPIXFileError(.invalidArgument, "a period is given twice (two with one index, or two times-only periods with one start)")
        }
        let keyPeriods: [(period: CPIXExportPeriod, id: String, name: String)?] =
            periods.isEmpty ? [nil] : periods.enumerated().map { (periods[$0.offset], Self.periodID($0.element, ordinal: $0.offset + 1), names[$0.offset]) }
        var slots: [Slot] = []
        for period in keyPeriods {
            for trackType in trackTypes {
                let kid = Self.derivedKeyID(tenant: tenant, contentID: contentID, periodName: period?.name, trackType: trackType)
                slots.append(Slot(period: period?.period, periodID: period?.id, trackType: trackType, keyID: kid))
            }
        }
        if let keyIDs {
            guard keyIDs.count == slots.count else {
                throw CPIXFileError(
                    .invalidArgument,
                    "\(keyIDs.count) KIDs given for \(slots.count) keys (\(keyPeriods.count) period(s) x \(trackTypes.count) track(s)); give one --kid per key, period by period, tracks in --track order, or none to derive them"
                )
            }
            guard Set(keyIDs).count == keyIDs.count else {
                throw CPIXFileError(.invalidArgument, "a KID is given twice; a KID names one key of one period")
            }
            for index in slots.indices { slots[index].keyID = keyIDs[index] }
        }
        return slots
    }

    /// `ContentKeyPeriod@id`, an xs:ID (so not starting with a digit): from the index, else from
    /// the period's place in the list (times hold `:`, which an xs:ID cannot).
    static func periodID(_ period: CPIXExportPeriod, ordinal: Int) -> String {
        period.index.map { "keyPeriod_\($0)" } ?? "keyPeriod_p\(ordinal)"
    }

    /// A KID for (tenant, content, period name as in the asset ID, track) that is the same at every
    /// export: the first 16 bytes of SHA-256 over a label and the four values, each prefixed by its
    /// length (so no two inputs give the same bytes), with RFC 9562's version 8 and variant bits
    /// set, the version that RFC gives a UUID made from a SHA-256 name. A KID is public (it is in
    /// the playlist's URI), so nothing secret goes in.
    package static func derivedKeyID(tenant: StoreIdentifier, contentID: String, periodName: String?, trackType: String) -> KID {
        var input = Array("FairPlayKSM CPIX KID v1".utf8)
        for field in [tenant.value, contentID, periodName ?? "", trackType] {
            let bytes = Array(field.utf8)
            let count = UInt32(truncatingIfNeeded: bytes.count)
            input += [UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)]
            input += bytes
        }
        var bytes = Array(FairPlayCrypto.sha256(input).prefix(16))
        bytes[6] = bytes[6] & 0x0F | 0x80
        bytes[8] = bytes[8] & 0x3F | 0x80
        // SHA-256 is 32 bytes, so the prefix is 16.
        guard let kid = KID(bytes: bytes) else { preconditionFailure("a SHA-256 prefix of 16 bytes is not 16 bytes") }
        return kid
    }

    /// KIDs as `--kid` gives them: UUIDs, `8-4-4-4-12` hexadecimal digits.
    /// - Throws: `.invalidArgument` naming the first that is not one.
    package static func keyIDs(_ texts: [String]) throws(CPIXFileError) -> [KID] {
        var kids: [KID] = []
        for text in texts {
            guard let kid = KID(uuid: text.trimmingWhiteSpace) else {
                throw CPIXFileError(.invalidArgument, "--kid \(text.prefix(64)) is not a UUID (8-4-4-4-12 hexadecimal digits)")
            }
            kids.append(kid)
        }
        return kids
    }

    /// The SPEKE request document for this export.
    package func requestDocument() throws(CPIXFileError) -> XMLElementValue {
        let cpix = CPIXNamespace.cpix
        let slots = try slots()
        var root = XMLElementValue(cpix, "CPIX", attributes: [XMLAttribute("contentId", contentID), XMLAttribute("version", spekeVersion.cpixVersion)])
        if let der = recipientCertificateDER {
            let certificate = XMLElementValue(CPIXNamespace.xmldsig, "X509Certificate", text: Base64.encode(der))
            let deliveryKey = XMLElementValue(
                cpix, "DeliveryKey", children: [XMLElementValue(CPIXNamespace.xmldsig, "X509Data", children: [certificate])])
            let deliveryData = XMLElementValue(cpix, "DeliveryData", attributes: [XMLAttribute("id", "recipient-1")], children: [deliveryKey])
            root.children.append(XMLElementValue(cpix, "DeliveryDataList", children: [deliveryData]))
        }
        var keys = XMLElementValue(cpix, "ContentKeyList")
        var systems = XMLElementValue(cpix, "DRMSystemList")
        var rules = XMLElementValue(cpix, "ContentKeyUsageRuleList")
        for slot in slots {
            let kid = slot.keyID.description
            keys.children.append(
                XMLElementValue(cpix, "ContentKey", attributes: [XMLAttribute("commonEncryptionScheme", "cbcs"), XMLAttribute("kid", kid)]))
            systems.children.append(
                XMLElementValue(
                    cpix, "DRMSystem", attributes: [XMLAttribute("kid", kid), XMLAttribute("systemId", DRMSystemID.fairPlay.description)],
                    children: [
                        XMLElementValue(cpix, "URIExtXKey"),
                        XMLElementValue(cpix, "HLSSignalingData", attributes: [XMLAttribute("playlist", HLSPlaylist.media.rawValue)]),
                        XMLElementValue(cpix, "HLSSignalingData", attributes: [XMLAttribute("playlist", HLSPlaylist.master.rawValue)]),
                    ]))
            var rule = XMLElementValue(cpix, "ContentKeyUsageRule", attributes: [XMLAttribute("intendedTrackType", slot.trackType), XMLAttribute("kid", kid)])
            if let periodID = slot.periodID {
                rule.children.append(XMLElementValue(cpix, "KeyPeriodFilter", attributes: [XMLAttribute("periodId", periodID)]))
            }
            rule.children += try CPIXTrackFilter(trackType: slot.trackType).elements
            rules.children.append(rule)
        }
        root.children += [keys, systems]
        if !periods.isEmpty {
            var list = XMLElementValue(cpix, "ContentKeyPeriodList")
            for (offset, period) in periods.enumerated() {
                var element = XMLElementValue(cpix, "ContentKeyPeriod", attributes: [XMLAttribute("id", Self.periodID(period, ordinal: offset + 1))])
                element.set(attribute: "index", period.index.map(String.init))
                element.set(attribute: "start", period.start)
                element.set(attribute: "end", period.end)
                list.children.append(element)
            }
            root.children.append(list)
        }
        root.children.append(rules)
        return root
    }

    /// SPEKE v2.0 (CPIX 2.3), or v2.1 when a period is given by its times alone, which only v2.1
    /// reads (the answer is still written as CPIX 2.3: ``spekeRequest()``).
    var spekeVersion: SpekeVersion { periods.contains { $0.index == nil } ? .v2_1 : .v2_0 }

    /// The request as ``SpekeRequest`` reads it, with the rules a packager's request meets. The
    /// answer written from it says CPIX 2.3: a times-only period, which SPEKE reads only under
    /// v2.1 (CPIX 2.4), is also CPIX 2.3 (`ContentKeyPeriod@index` is optional there), and nothing
    /// else of CPIX 2.4 is used.
    /// - Throws: `.invalidArgument` with SPEKE's reason when the request breaks one (an
    ///   unreadable recipient certificate, a certificate key under 2048 bits, a content ID too long).
    package func spekeRequest() throws(CPIXFileError) -> SpekeRequest {
        let document = try requestDocument()
        do throws(SpekeError) {
            var request = try SpekeRequest(root: document, spekeVersion: spekeVersion)
            request.cpixVersion = SpekeVersion.v2_0.cpixVersion
            return request
        } catch {
            throw CPIXFileError(.invalidArgument, error.message)
        }
    }
}
