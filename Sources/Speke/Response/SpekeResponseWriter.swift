import FairPlay
import Wire

/// Answers a ``SpekeRequest`` with the keys the issuing side chose: the request's document, in
/// CPIX schema order (`DeliveryDataList`, `ContentKeyList`, `DRMSystemList`,
/// `ContentKeyPeriodList`, `ContentKeyUsageRuleList`), with every requested value filled.
///
/// - Each `ContentKey` keeps `kid`, `commonEncryptionScheme` and its other attributes, gets
///   `explicitIV` (the request's text when it sent one, else the issued IV) and
///   `cpix:Data/pskc:Secret` holding the key: `pskc:PlainValue`, or, when the request had a
///   `DeliveryDataList`, `pskc:EncryptedValue` and `pskc:ValueMAC` (see ``ContentKeyEncryption``).
/// - Each FairPlay `DRMSystem` gets `URIExtXKey` (base64 of the skd URI) if it was requested and
///   one `HLSSignalingData` per requested playlist (base64 of ``HLSSignaling/tag(for:skdURI:)``),
///   with the request's `playlist` spelling. `PSSH`, `ContentProtectionData` and the other
///   signaling elements are not answered for FairPlay: FairPlay has none ("FairPlay uses only HLS
///   signaling (no PSSH or ContentProtectionData)", MediaPackage guide), and AWS's verification
///   suite requires `ContentProtectionData` absent. AWS's FairPlay test request sends an empty
///   `<cpix:PSSH/>`; answering it empty would not be "a valid value", so it is left out.
/// - `ContentKeyPeriodList` and `ContentKeyUsageRuleList` come back as read; `CPIX@id` does not
///   (AWS's verification suite: "not expected in the response for Speke V2").
package enum SpekeResponseWriter {
    /// The default `X-Speke-User-Agent`.
    package static let defaultUserAgent = "FairPlayKSM"

    /// The answer to `request`.
    /// - Parameters:
    ///   - keys: one ``IssuedKey`` per requested KID (more are ignored).
    ///   - userAgent: the `X-Speke-User-Agent` value.
    /// - Throws: `keyIssuing` (500) when a requested KID has no key or its IV is not the request's
    ///   `explicitIV`; `crypto` (500) when OpenSSL fails.
    package static func response(for request: SpekeRequest, keys: [KID: IssuedKey], userAgent: String = defaultUserAgent) throws(SpekeError) -> SpekeResponse {
        let cpix = CPIXNamespace.cpix
        for requested in request.contentKeys {
            guard let issued = keys[requested.kid] else { throw .keyIssuing("no key was issued for KID \(requested.kidText)") }
            if let iv = requested.explicitIV, !FairPlayCrypto.constantTimeEqual(iv, issued.iv) {
                throw .keyIssuing("the IV issued for KID \(requested.kidText) is not the request's explicitIV")
            }
        }
        let encryption = request.deliveryRecipients.isEmpty ? nil : ContentKeyEncryption()

        var root = XMLElementValue(cpix, "CPIX")
        root.set(attribute: "contentId", request.contentID)
        root.set(attribute: "version", request.cpixVersion)
        root.set(attribute: "name", request.name)

        if let encryption {
            var list = XMLElementValue(cpix, "DeliveryDataList", attributes: request.echo.listAttributes["DeliveryDataList"] ?? [])
            for recipient in request.deliveryRecipients {
                list.children.append(try encryption.deliveryData(for: recipient))
            }
            root.children.append(list)
        }

        var keyList = XMLElementValue(cpix, "ContentKeyList", attributes: request.echo.listAttributes["ContentKeyList"] ?? [])
        for requested in request.contentKeys {
            // Checked above: every requested KID has a key.
            guard let issued = keys[requested.kid] else { continue }
            var element = XMLElementValue(cpix, "ContentKey", attributes: requested.otherAttributes)
            element.set(attribute: "kid", requested.kidText)
            element.set(attribute: "commonEncryptionScheme", requested.commonEncryptionScheme)
            element.set(attribute: "explicitIV", requested.explicitIVText ?? Base64.encode(issued.iv))
            let secret: XMLElementValue
            if let encryption {
                secret = try encryption.secret(for: issued.key)
            } else {
                secret = XMLElementValue(
                    CPIXNamespace.pskc, "Secret", children: [XMLElementValue(CPIXNamespace.pskc, "PlainValue", text: Base64.encode(issued.key))])
            }
            element.children.append(XMLElementValue(cpix, "Data", children: [secret]))
            keyList.children.append(element)
        }
        root.children.append(keyList)

        var systemList = XMLElementValue(cpix, "DRMSystemList", attributes: request.echo.listAttributes["DRMSystemList"] ?? [])
        for system in request.drmSystems {
            guard let issued = keys[system.kid] else { throw .keyIssuing("no key was issued for KID \(system.kidText)") }
            var element = XMLElementValue(cpix, "DRMSystem", attributes: system.otherAttributes)
            element.set(attribute: "kid", system.kidText)
            element.set(attribute: "systemId", system.systemIDText)
            if system.requested.contains(.uriExtXKey) {
                element.children.append(XMLElementValue(cpix, "URIExtXKey", text: Base64.encode(Array(issued.skdURI.utf8))))
            }
            for playlist in system.hlsPlaylists {
                let tag = HLSSignaling.tag(for: playlist, skdURI: issued.skdURI)
                element.children.append(
                    XMLElementValue(cpix, "HLSSignalingData", attributes: [XMLAttribute("playlist", playlist.rawValue)], text: Base64.encode(Array(tag.utf8))))
            }
            systemList.children.append(element)
        }
        root.children.append(systemList)

        if let periods = request.echo.contentKeyPeriodList { root.children.append(periods) }
        root.children.append(request.echo.contentKeyUsageRuleList)

        let body = XMLWriter.document(root, declaring: [cpix, CPIXNamespace.pskc])
        return SpekeResponse(body: body, spekeVersion: request.spekeVersion.rawValue, userAgent: userAgent)
    }
}
