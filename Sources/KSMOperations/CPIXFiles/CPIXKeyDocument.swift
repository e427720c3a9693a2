import FairPlay
import Speke
import Wire

/// The content keys of a CPIX document made elsewhere (a packager, another key provider, an
/// export of ours), read for `ksm admin import-cpix`.
///
/// The reader is lenient where documents differ and strict where a key could be wrong: it takes
/// plain DASH-IF CPIX as well as SPEKE-shaped answers (elements matched by namespace and local
/// name in any order, lists optional but `ContentKeyList`, DRM systems other than FairPlay
/// ignored), and refuses a key it cannot place or trust: a `ContentKey` without a value, a value
/// that is not 16 bytes, a FairPlay URI that is not `skd://`, a KID filtered on several periods, an
/// encrypted key whose `ValueMAC` does not check. The document is read by ``SafeXMLReader``, so a
/// DTD or entity never reaches the XML parser.
///
/// Holds key material: the caller cleanses it (``cleanse()``) once the keys are stored.
package struct CPIXKeyDocument: Sendable {
    /// `CPIX@contentId`; nil when the document has none (it is optional in DASH-IF CPIX).
    package var contentID: String?
    /// The keys, in document order.
    package var keys: [Key]

    /// One content key and what places it.
    package struct Key: Sendable {
        /// `ContentKey@kid`.
        package var keyID: KID
        /// The 16-byte content key, decrypted when the document encrypted it.
        package var contentKey: [UInt8]
        /// `ContentKey@explicitIV`, 16 bytes; nil when the document has none.
        package var explicitIV: [UInt8]?
        /// The `skd://` URI of the key's FairPlay `DRMSystem` (`URIExtXKey`, else the media, else the
        /// master `HLSSignalingData`); nil when the document signals no FairPlay URI for it.
        package var skdURI: String?
        /// The key period its usage rules filter on; nil when none.
        package var period: ContentKeyPeriod?
        /// `ContentKeyUsageRule@intendedTrackType` of its first rule; nil when none.
        package var trackType: String?
    }

    /// Overwrites every key.
    package mutating func cleanse() {
        for index in keys.indices { FairPlayCrypto.cleanse(&keys[index].contentKey) }
    }

    /// How much of a file is read: a CPIX file for a long live event holds thousands of keys.
    package static let limits = XMLReadLimits(maximumBytes: 16 << 20, maximumDepth: 32, maximumElements: 200_000)

    /// Reads `bytes`.
    /// - Parameter privateKey: the recipient key to decrypt encrypted keys with; nil when the
    ///   keys are expected in the clear.
    /// - Throws: `.invalidDocument` naming the first problem.
    package init(bytes: [UInt8], privateKey: RSAPrivateKey?, limits: XMLReadLimits = CPIXKeyDocument.limits) throws(CPIXFileError) {
        let root: XMLElementValue
        do throws(XMLReadError) {
            root = try SafeXMLReader.read(bytes, limits: limits)
        } catch {
            throw CPIXFileError(.invalidDocument, "the file is not a CPIX document that can be read: \(error)")
        }
        try self.init(root: root, privateKey: privateKey)
    }

    /// Reads a document already parsed.
    package init(root: XMLElementValue, privateKey: RSAPrivateKey?) throws(CPIXFileError) {
        let cpix = CPIXNamespace.cpix
        guard root.namespace == cpix, root.name == "CPIX" else {
            throw Self.invalid("the root element is not cpix:CPIX (namespace \(CPIXNamespace.cpix))")
        }
        let contentID = root[attribute: "contentId"].flatMap { $0.isEmpty ? nil : $0 }
        let lists = root.elements(cpix, "ContentKeyList")
        guard lists.count == 1, let list = lists.first else { throw Self.invalid("the document needs exactly one cpix:ContentKeyList") }
        let elements = list.elements(cpix, "ContentKey")
        guard !elements.isEmpty else { throw Self.invalid("cpix:ContentKeyList holds no cpix:ContentKey") }

        let periods = try Self.periods(root)
        let rules = try Self.usageRules(root, periods: periods)
        let uris = try Self.fairPlayURIs(root)
        var decryption: CPIXKeyDecryption? = nil
        var keys: [Key] = []
        var seen: Set<KID> = []
        do throws(CPIXFileError) {
            for element in elements {
                guard let kidText = element[attribute: "kid"], let kid = KID(uuid: kidText.trimmingWhiteSpace) else {
                    throw Self.invalid("a cpix:ContentKey has no kid, or one that is not a UUID")
                }
                guard seen.insert(kid).inserted else { throw Self.invalid("ContentKey@kid \(kid) appears twice") }
                var iv: [UInt8]? = nil
                if let text = element[attribute: "explicitIV"] {
                    guard let bytes = Base64.decode(text.trimmingWhiteSpace), bytes.count == 16 else {
                        throw Self.invalid("ContentKey@explicitIV of KID \(kid) is not 16 bytes of base64")
                    }
                    iv = bytes
                }
                guard let secret = element.elements(cpix, "Data").first?.elements(CPIXNamespace.pskc, "Secret").first else {
                    throw Self.invalid("ContentKey \(kid) holds no key (no cpix:Data/pskc:Secret): the file is a request, not an answer")
                }
                let contentKey: [UInt8]
                if let plain = secret.elements(CPIXNamespace.pskc, "PlainValue").first {
                    guard let bytes = Base64.decode(plain.trimmedText) else { throw Self.invalid("the PlainValue of ContentKey \(kid) is not base64") }
                    contentKey = bytes
                } else if secret.elements(CPIXNamespace.pskc, "EncryptedValue").first != nil {
                    let decryptor: CPIXKeyDecryption
                    if let decryption {
                        decryptor = decryption
                    } else {
                        decryptor = try CPIXKeyDecryption(root: root, privateKey: privateKey)
                        decryption = decryptor
                    }
                    contentKey = try decryptor.contentKey(secret, keyID: kid)
                } else {
                    throw Self.invalid("ContentKey \(kid) has neither a PlainValue nor an EncryptedValue")
                }
                guard contentKey.count == 16 else {
                    var wrong = contentKey
                    FairPlayCrypto.cleanse(&wrong)
                    throw Self.invalid("the key of ContentKey \(kid) is \(wrong.count) bytes, not 16")
                }
                let keyRules = rules.filter { $0.kid == kid }
                let periodIDs = Set(keyRules.flatMap(\.periodIDs))
                guard periodIDs.count <= 1 else {
                    throw Self.invalid("KID \(kid) is filtered on \(periodIDs.count) key periods; a key belongs to one period")
                }
                let period = periodIDs.first.flatMap { id in periods.first { $0.id == id } }
                keys.append(
                    Key(
                        keyID: kid, contentKey: contentKey, explicitIV: iv, skdURI: uris[kid], period: period,
                        trackType: keyRules.first?.intendedTrackType))
            }
        } catch {
            for index in keys.indices { FairPlayCrypto.cleanse(&keys[index].contentKey) }
            throw error
        }
        self.contentID = contentID
        self.keys = keys
    }

    static func invalid(_ detail: String) -> CPIXFileError {
        CPIXFileError(.invalidDocument, "the CPIX document cannot be imported: \(detail)")
    }

    /// `ContentKeyPeriodList`: each period's id (unique), index and times as written.
    static func periods(_ root: XMLElementValue) throws(CPIXFileError) -> [ContentKeyPeriod] {
        var periods: [ContentKeyPeriod] = []
        var ids: Set<String> = []
        for element in root.elements(CPIXNamespace.cpix, "ContentKeyPeriodList").flatMap({ $0.elements(CPIXNamespace.cpix, "ContentKeyPeriod") }) {
            guard let id = element[attribute: "id"], !id.isEmpty else { throw invalid("a cpix:ContentKeyPeriod has no id") }
            guard ids.insert(id).inserted else { throw invalid("ContentKeyPeriod@id \(id.prefix(128)) appears twice") }
            var index: UInt64? = nil
            if let text = element[attribute: "index"] {
                guard let value = UInt64(text.trimmingWhiteSpace) else {
                    throw invalid("ContentKeyPeriod@index of \(id.prefix(128)) is not a non-negative integer")
                }
                index = value
            }
            periods.append(
                ContentKeyPeriod(
                    id: id, index: index, start: element[attribute: "start"]?.trimmingWhiteSpace, end: element[attribute: "end"]?.trimmingWhiteSpace))
        }
        return periods
    }

    /// One usage rule as the import needs it.
    struct Rule {
        var kid: KID
        var intendedTrackType: String?
        var periodIDs: [String]
    }

    /// `ContentKeyUsageRuleList`: each rule's KID, track type and period filters (which must name
    /// a listed period). Video and audio filters are the packager's business and not read.
    static func usageRules(_ root: XMLElementValue, periods: [ContentKeyPeriod]) throws(CPIXFileError) -> [Rule] {
        let cpix = CPIXNamespace.cpix
        let known = Set(periods.map(\.id))
        var rules: [Rule] = []
        for element in root.elements(cpix, "ContentKeyUsageRuleList").flatMap({ $0.elements(cpix, "ContentKeyUsageRule") }) {
            guard let text = element[attribute: "kid"], let kid = KID(uuid: text.trimmingWhiteSpace) else {
                throw invalid("a cpix:ContentKeyUsageRule has no kid, or one that is not a UUID")
            }
            var ids: [String] = []
            for filter in element.elements(cpix, "KeyPeriodFilter") {
                guard let id = filter[attribute: "periodId"], known.contains(id) else {
                    throw invalid("a KeyPeriodFilter of KID \(kid) names no cpix:ContentKeyPeriod")
                }
                ids.append(id)
            }
            rules.append(Rule(kid: kid, intendedTrackType: element[attribute: "intendedTrackType"].flatMap { $0.isEmpty ? nil : $0 }, periodIDs: ids))
        }
        return rules
    }

    /// The `skd://` URI each KID's FairPlay `DRMSystem` signals: `URIExtXKey` (base64 of the URI),
    /// else the URI attribute of the media, else the master, `HLSSignalingData` tag. Signaling that
    /// names two different URIs for one key, or one that is not `skd://`, is refused: the worker
    /// finds the key by exactly that string.
    static func fairPlayURIs(_ root: XMLElementValue) throws(CPIXFileError) -> [KID: String] {
        let cpix = CPIXNamespace.cpix
        var uris: [KID: String] = [:]
        for system in root.elements(cpix, "DRMSystemList").flatMap({ $0.elements(cpix, "DRMSystem") }) {
            guard let systemText = system[attribute: "systemId"], KID(uuid: systemText.trimmingWhiteSpace) == DRMSystemID.fairPlay else { continue }
            guard let kidText = system[attribute: "kid"], let kid = KID(uuid: kidText.trimmingWhiteSpace) else {
                throw invalid("a FairPlay cpix:DRMSystem has no kid, or one that is not a UUID")
            }
            var found: [String] = []
            for element in system.elements(cpix, "URIExtXKey") where !element.trimmedText.isEmpty {
                guard let bytes = Base64.decode(element.trimmedText), let uri = String(validating: bytes, as: UTF8.self) else {
                    throw invalid("the URIExtXKey of KID \(kid) is not base64 of UTF-8 text")
                }
                found.append(uri)
            }
            let signaling = system.elements(cpix, "HLSSignalingData").filter { !$0.trimmedText.isEmpty }
            let ordered = signaling.filter { $0[attribute: "playlist"] == "media" } + signaling.filter { $0[attribute: "playlist"] != "media" }
            for element in ordered {
                guard let bytes = Base64.decode(element.trimmedText), let tag = String(validating: bytes, as: UTF8.self) else {
                    throw invalid("an HLSSignalingData of KID \(kid) is not base64 of UTF-8 text")
                }
                guard let uri = uriAttribute(tag) else { throw invalid("an HLSSignalingData of KID \(kid) holds no URI=\"...\" attribute") }
                found.append(uri)
            }
            guard let uri = found.first else { continue }
            guard found.allSatisfy({ $0 == uri }) else { throw invalid("the FairPlay signaling of KID \(kid) names different URIs") }
            guard uri.hasPrefix("skd://"), uri.utf8.count > 6, !uri.contains(where: { $0 == "\"" || $0.isNewline }) else {
                throw invalid("the FairPlay URI of KID \(kid) is not an skd:// URI")
            }
            if let other = uris[kid], other != uri { throw invalid("two FairPlay DRMSystems of KID \(kid) name different URIs") }
            uris[kid] = uri
        }
        return uris
    }

    /// The quoted value of the `URI` attribute of an HLS tag (`#EXT-X-KEY:METHOD=...,URI="..."`).
    package static func uriAttribute(_ tag: String) -> String? {
        guard let colon = tag.firstIndex(of: ":") else { return nil }
        var rest = tag[tag.index(after: colon)...]
        // Attribute list, RFC 8216 section 4.2: NAME=VALUE pairs separated by commas, quoted
        // strings holding no quote, so splitting on quotes first keeps commas inside them.
        while !rest.isEmpty {
            guard let equals = rest.firstIndex(of: "=") else { return nil }
            let name = rest[..<equals].trimmingWhiteSpace
            var value = rest[rest.index(after: equals)...]
            let text: Substring
            if value.first == "\"" {
                value = value.dropFirst()
                guard let close = value.firstIndex(of: "\"") else { return nil }
                text = value[..<close]
                rest = value[value.index(after: close)...]
            } else {
                let end = value.firstIndex(of: ",") ?? value.endIndex
                text = value[..<end]
                rest = value[end...]
            }
            if name == "URI" { return String(text) }
            rest = rest.drop { $0 == "," || $0 == " " }
        }
        return nil
    }
}
