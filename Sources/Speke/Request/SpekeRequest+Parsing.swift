import FairPlay
import Wire

/// Reading a request. Sources, cited beside each check: AWS SPEKE v2 "Customizations and constraints
/// to the DASH-IF specification" (the error table's texts), "Standard payload components" (which
/// elements and attributes are mandatory), the MediaPackage SPEKE v2 guide, and AWS's verification
/// suite (awslabs/speke-reference-server), whose negative cases all must fail.
///
/// The document is read by namespace and local name, in any child order: AWS's own requests are
/// often not valid against the CPIX XSD (a `DeliveryData` without `DocumentKey`, children out of
/// schema order), so schema validation would refuse real traffic.
///
/// Order of checks, for a request with several faults (AWS does not fix one): the SPEKE version
/// header before the body is read ("not try to process the CPIX document"), then well-formedness,
/// `contentId`, `version`, each key's scheme in document order, mixed schemes, the DRM systems
/// (unsupported system, then scheme against system), key periods, the encryption contract, and
/// last the delivery certificates.
extension SpekeRequest {
    /// Reads and validates a request body.
    /// - Parameters:
    ///   - body: the POST body, a CPIX document.
    ///   - spekeVersionHeader: the `X-Speke-Version` header's value; nil when absent.
    ///   - policy: the tenant's limits on the encryption contract.
    ///   - limits: how much XML the reader accepts.
    /// - Throws: ``SpekeError`` with the HTTP status and body to answer.
    package init(
        body: [UInt8], spekeVersionHeader: String?, policy: ContractPolicy = ContractPolicy(), limits: XMLReadLimits = XMLReadLimits()
    ) throws(SpekeError) {
        let version = try SpekeVersion(header: spekeVersionHeader)
        let root: XMLElementValue
        do throws(XMLReadError) {
            root = try SafeXMLReader.read(body, limits: limits)
        } catch {
            throw SpekeError(error)
        }
        try self.init(root: root, spekeVersion: version, policy: policy)
    }

    /// Validates a document already read (the fuzzer and the tests enter here too).
    package init(root: XMLElementValue, spekeVersion: SpekeVersion, policy: ContractPolicy = ContractPolicy()) throws(SpekeError) {
        let cpix = CPIXNamespace.cpix
        guard root.namespace == cpix, root.name == "CPIX" else { throw .malformedDocument("the root element is not cpix:CPIX") }

        // "When receiving an empty value for this attribute, the key provider shall return an error
        // with description 'Missing CPIX@contentId'." Absent counts as empty.
        guard let contentID = root[attribute: "contentId"], !contentID.isEmpty else { throw .missingContentID }
        // "... 'Missing CPIX@version'. When receiving a request with an unsupported version, ...
        // 'Unsupported CPIX@version'." Each SPEKE version is aligned on one CPIX version, so a
        // version other than the header's is unsupported for this request.
        guard let cpixVersion = root[attribute: "version"], !cpixVersion.isEmpty else { throw .missingCPIXVersion }
        guard cpixVersion == spekeVersion.cpixVersion else { throw .unsupportedCPIXVersion }

        var listAttributes: [String: [XMLAttribute]] = [:]
        let keyList = try Self.single(root, "ContentKeyList", required: true)
        listAttributes["ContentKeyList"] = keyList?.attributes
        let contentKeys = try Self.contentKeys(keyList?.elements(cpix, "ContentKey") ?? [])

        let systemList = try Self.single(root, "DRMSystemList", required: true)
        listAttributes["DRMSystemList"] = systemList?.attributes
        let drmSystems = try Self.drmSystems(systemList?.elements(cpix, "DRMSystem") ?? [], keys: contentKeys, version: spekeVersion)

        let periodList = try Self.single(root, "ContentKeyPeriodList", required: false)
        let periods = try Self.periods(periodList, version: spekeVersion)

        // A request without a contract (no list, or an empty one) has no VideoFilter or AudioFilter anywhere.
        let ruleLists = root.elements(cpix, "ContentKeyUsageRuleList")
        guard ruleLists.count <= 1 else { throw .malformedDocument("more than one cpix:ContentKeyUsageRuleList") }
        guard let ruleList = ruleLists.first else { throw .missingContract }
        let usageRules = try Self.usageRules(ruleList.elements(cpix, "ContentKeyUsageRule"), keys: contentKeys, periods: periods, policy: policy)

        let deliveryList = try Self.single(root, "DeliveryDataList", required: false)
        listAttributes["DeliveryDataList"] = deliveryList?.attributes
        let recipients = try Self.recipients(deliveryList)

        self.init(
            spekeVersion: spekeVersion, contentID: contentID, cpixVersion: cpixVersion, name: root[attribute: "name"], contentKeys: contentKeys,
            drmSystems: drmSystems, periods: periods, usageRules: usageRules, deliveryRecipients: recipients,
            echo: Echo(contentKeyPeriodList: periodList, contentKeyUsageRuleList: ruleList, listAttributes: listAttributes))
    }

    /// The one child `cpix:<name>` of `parent`: nil when absent and optional. A list that is
    /// present must not be empty (AWS tables: "at least one" child for every list).
    static func single(_ parent: XMLElementValue, _ name: String, required: Bool) throws(SpekeError) -> XMLElementValue? {
        let found = parent.elements(CPIXNamespace.cpix, name)
        guard found.count <= 1 else { throw .malformedDocument("more than one cpix:\(name)") }
        guard let list = found.first else {
            if required { throw .malformedDocument("cpix:\(name) is missing") }
            return nil
        }
        guard list.children.contains(where: { $0.namespace == CPIXNamespace.cpix }) else { throw .malformedDocument("cpix:\(name) is empty") }
        return list
    }

    static func contentKeys(_ elements: [XMLElementValue]) throws(SpekeError) -> [RequestedContentKey] {
        guard !elements.isEmpty else { throw .malformedDocument("cpix:ContentKeyList holds no cpix:ContentKey") }
        var keys: [RequestedContentKey] = []
        var seen: Set<KID> = []
        for element in elements {
            guard let kidText = element[attribute: "kid"], !kidText.isEmpty else { throw .malformedDocument("a cpix:ContentKey has no kid") }
            guard let kid = KID(uuid: kidText) else { throw .malformedDocument("ContentKey@kid \(kidText.prefix(64)) is not a UUID") }
            guard seen.insert(kid).inserted else { throw .malformedDocument("ContentKey@kid \(kidText) appears twice") }
            // "... for each requested key. When receiving an empty value for this attribute, ...
            // 'Missing ContentKey@commonEncryptionScheme for KID `id`'."
            guard let scheme = element[attribute: "commonEncryptionScheme"], !scheme.isEmpty else { throw .missingEncryptionScheme(kid: kidText) }
            var iv: [UInt8]?
            let ivText = element[attribute: "explicitIV"]
            if let ivText {
                // Lenient about non-zero padding bits (Wire's decoder ignores them), strict about length.
                guard let bytes = Base64.decode(ivText.trimmingXMLSpace), bytes.count == 16 else {
                    throw .malformedDocument("ContentKey@explicitIV for KID \(kidText) is not 16 bytes of base64")
                }
                iv = bytes
            }
            let others = element.attributes.filter { !["kid", "commonEncryptionScheme", "explicitIV"].contains($0.name) }
            keys.append(
                RequestedContentKey(kid: kid, kidText: kidText, commonEncryptionScheme: scheme, explicitIV: iv, explicitIVText: ivText, otherAttributes: others)
            )
        }
        // "A unique CPIX document cannot mix multiple values for different
        // ContentKey@commonEncryptionScheme attributes."
        guard Set(keys.map(\.commonEncryptionScheme)).count == 1 else { throw .mixedEncryptionSchemes }
        return keys
    }

    /// DRM systems other than FairPlay are refused, before any key is issued: AWS defines no
    /// message for them, but "when included in a CPIX request by the encryptor, all elements and
    /// attributes shall carry a valid value in the key provider CPIX response. If not, the
    /// encryptor shall stop and throw an error". Answering a Widevine or PlayReady `DRMSystem`
    /// empty (or dropping it) would make the encryptor fail later and less clearly; AWS's reference
    /// server fails the whole request too. So: 422 `Unsupported DRMSystem@systemId <id>`, our
    /// wording. A tenant whose endpoint asks for several systems must configure FairPlay only.
    static func drmSystems(_ elements: [XMLElementValue], keys: [RequestedContentKey], version: SpekeVersion) throws(SpekeError) -> [RequestedDRMSystem] {
        guard !elements.isEmpty else { throw .malformedDocument("cpix:DRMSystemList holds no cpix:DRMSystem") }
        let keysByKID = Dictionary(keys.map { ($0.kid, $0) }, uniquingKeysWith: { first, _ in first })
        var systems: [RequestedDRMSystem] = []
        var seen: Set<[UInt8]> = []
        for element in elements {
            guard let systemText = element[attribute: "systemId"], !systemText.isEmpty else { throw .malformedDocument("a cpix:DRMSystem has no systemId") }
            guard let systemID = KID(uuid: systemText) else { throw .malformedDocument("DRMSystem@systemId \(systemText.prefix(64)) is not a UUID") }
            guard let kidText = element[attribute: "kid"], !kidText.isEmpty else { throw .malformedDocument("a cpix:DRMSystem has no kid") }
            guard let kid = KID(uuid: kidText) else { throw .malformedDocument("DRMSystem@kid \(kidText.prefix(64)) is not a UUID") }
            guard let key = keysByKID[kid] else { throw .malformedDocument("DRMSystem@kid \(kidText) names no cpix:ContentKey") }
            guard seen.insert(systemID.bytes + kid.bytes).inserted else {
                throw .malformedDocument("two cpix:DRMSystem for systemId \(systemText) and kid \(kidText)")
            }
            guard systemID == DRMSystemID.fairPlay else { throw .unsupportedDRMSystem(systemID: systemText) }
            // "Not all ContentKey@commonEncryptionScheme values are compatible with all DRM technologies."
            guard DRMSystemID.fairPlaySchemes(version).contains(key.commonEncryptionScheme) else { throw .schemeIncompatible(systemID: systemText) }

            var requested: Set<SignalingElement> = []
            var playlists: [HLSPlaylist] = []
            for child in element.children {
                if child.namespace == CPIXNamespace.speke {
                    requested.insert(.spekeV1)
                    continue
                }
                guard child.namespace == CPIXNamespace.cpix, let kind = SignalingElement(rawValue: child.name) else { continue }
                requested.insert(kind)
                guard kind == .hlsSignalingData else { continue }
                // CPIX: `playlist` is unique per DRMSystem; AWS wants one `media` and one `master`.
                guard let text = child[attribute: "playlist"], let playlist = HLSPlaylist(rawValue: text) else {
                    throw .malformedDocument("HLSSignalingData@playlist must be media, master or multiVariant")
                }
                let isMultivariant = playlist != .media
                guard !playlists.contains(where: { $0 == playlist || (isMultivariant && $0 != .media) }) else {
                    throw .malformedDocument("two HLSSignalingData for the \(playlist.rawValue) playlist of kid \(kidText)")
                }
                playlists.append(playlist)
            }
            let others = element.attributes.filter { !["kid", "systemId"].contains($0.name) }
            systems.append(
                RequestedDRMSystem(
                    systemID: systemID, systemIDText: systemText, kid: kid, kidText: kidText, requested: requested, hlsPlaylists: playlists,
                    otherAttributes: others))
        }
        return systems
    }

    /// AWS "Standard payload components": `ContentKeyPeriod` needs `id` and `index` (v2.0). SPEKE
    /// v2.1 lets MediaPackage send start and end times instead of the index (`START_END_ONLY`).
    static func periods(_ list: XMLElementValue?, version: SpekeVersion) throws(SpekeError) -> [ContentKeyPeriod] {
        guard let list else { return [] }
        var periods: [ContentKeyPeriod] = []
        var ids: Set<String> = []
        for element in list.elements(CPIXNamespace.cpix, "ContentKeyPeriod") {
            guard let id = element[attribute: "id"], !id.isEmpty else { throw .malformedDocument("a cpix:ContentKeyPeriod has no id") }
            guard ids.insert(id).inserted else { throw .malformedDocument("ContentKeyPeriod@id \(id.prefix(128)) appears twice") }
            var index: UInt64?
            if let text = element[attribute: "index"] {
                guard let value = UInt64(text.trimmingXMLSpace) else {
                    throw .malformedDocument("ContentKeyPeriod@index of \(id.prefix(128)) is not a non-negative integer")
                }
                index = value
            }
            let period = ContentKeyPeriod(
                id: id, index: index, start: element[attribute: "start"], end: element[attribute: "end"], startOffset: element[attribute: "startOffset"],
                endOffset: element[attribute: "endOffset"])
            switch version {
            case .v2_0:
                guard index != nil else { throw .malformedDocument("ContentKeyPeriod \(id.prefix(128)) has no index") }
            case .v2_1:
                guard index != nil || period.start != nil || period.startOffset != nil else {
                    throw .malformedDocument("ContentKeyPeriod \(id.prefix(128)) has neither an index nor a start")
                }
            }
            periods.append(period)
        }
        return periods
    }

    static func recipients(_ list: XMLElementValue?) throws(SpekeError) -> [DeliveryRecipient] {
        guard let list else { return [] }
        var recipients: [DeliveryRecipient] = []
        for element in list.elements(CPIXNamespace.cpix, "DeliveryData") {
            guard let deliveryKey = element.elements(CPIXNamespace.cpix, "DeliveryKey").first,
                let certificate = deliveryKey.elements(CPIXNamespace.xmldsig, "X509Data").first?.elements(CPIXNamespace.xmldsig, "X509Certificate").first
            else { throw .malformedDocument("a cpix:DeliveryData has no DeliveryKey/ds:X509Data/ds:X509Certificate") }
            // Certificates are usually line-wrapped base64; white space is not part of the value.
            let text = certificate.text.filter { !$0.isWhitespace }
            guard let der = Base64.decode(text), !der.isEmpty else { throw .invalidDeliveryCertificate("ds:X509Certificate is not base64") }
            let key: RSAPublicKey
            do {
                key = try RSAPublicKey(certificateDER: der)
            } catch {
                throw .invalidDeliveryCertificate("not a DER X.509 certificate with an RSA key")
            }
            // AWS: "SPEKE requires 2048 RSA-based certificates" (CPIX recommends 3072; larger is accepted).
            guard key.bits >= 2048 else { throw .invalidDeliveryCertificate("the RSA key has \(key.bits) bits, fewer than 2048") }
            recipients.append(DeliveryRecipient(certificateDER: der, publicKey: key, deliveryKey: deliveryKey, attributes: element.attributes))
        }
        return recipients
    }
}
