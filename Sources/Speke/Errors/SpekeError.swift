/// Why a SPEKE request is refused: the HTTP status and the plain-text body the key provider answers.
///
/// Where AWS's "Customizations and constraints to the DASH-IF specification" (SPEKE v2, error
/// table) names the case, ``message`` is its exact text and the status is 422, which that page
/// allows "for all errors related to SPEKE/CPIX". Cases the page does not name (a malformed
/// document, an unknown DRM system, a bad certificate) use the same style, and their ``code`` says
/// they are ours. The message never holds key material; a KID or system ID it names is one the
/// request sent. Never status 200: the encryptor must see a failure.
package struct SpekeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Which rule failed; extensible, so a new check does not break a caller's `switch`.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        package let name: String
        /// True when AWS's error table defines the message, false when the wording is ours.
        package let isFromSpecification: Bool

        package var description: String { name }

        package static let missingContentID = Code(name: "missingContentID", isFromSpecification: true)
        package static let missingCPIXVersion = Code(name: "missingCPIXVersion", isFromSpecification: true)
        package static let unsupportedCPIXVersion = Code(name: "unsupportedCPIXVersion", isFromSpecification: true)
        package static let missingEncryptionScheme = Code(name: "missingEncryptionScheme", isFromSpecification: true)
        package static let mixedEncryptionSchemes = Code(name: "mixedEncryptionSchemes", isFromSpecification: true)
        package static let schemeIncompatibleWithDRMSystem = Code(name: "schemeIncompatibleWithDRMSystem", isFromSpecification: true)
        package static let unsupportedSpekeVersion = Code(name: "unsupportedSpekeVersion", isFromSpecification: true)
        package static let malformedContract = Code(name: "malformedContract", isFromSpecification: true)
        package static let contractNotSupported = Code(name: "contractNotSupported", isFromSpecification: true)
        package static let missingContract = Code(name: "missingContract", isFromSpecification: true)
        /// Not well-formed XML, a refused construct (DTD), or a CPIX structure SPEKE requires missing.
        package static let malformedDocument = Code(name: "malformedDocument", isFromSpecification: false)
        /// Larger than the reader's byte limit (HTTP 413).
        package static let documentTooLarge = Code(name: "documentTooLarge", isFromSpecification: false)
        /// A `DRMSystem@systemId` this key provider does not serve (research notes, section 9).
        package static let unsupportedDRMSystem = Code(name: "unsupportedDRMSystem", isFromSpecification: false)
        /// A `DeliveryData` certificate that is not a DER X.509 RSA certificate of 2048 bits or more.
        package static let invalidDeliveryCertificate = Code(name: "invalidDeliveryCertificate", isFromSpecification: false)
        /// The caller's keys do not fit the request (missing KID, IV differing from `explicitIV`):
        /// a fault of the key provider, not of the encryptor (HTTP 500).
        package static let keyIssuing = Code(name: "keyIssuing", isFromSpecification: false)
        /// OpenSSL failed while encrypting the response (HTTP 500).
        package static let crypto = Code(name: "crypto", isFromSpecification: false)
    }

    package var code: Code
    /// The HTTP status to answer: 422 for every SPEKE/CPIX rule, 413 for an oversized body, 500
    /// for a fault of our own.
    package var httpStatus: Int
    /// The response body, `text/plain; charset=utf-8`.
    package var message: String

    /// The content type of an error body.
    package static let contentType = "text/plain; charset=utf-8"

    package init(_ code: Code, httpStatus: Int = 422, _ message: String) {
        self.code = code
        self.httpStatus = httpStatus
        self.message = message
    }

    package var description: String { "SPEKE \(httpStatus) \(code): \(message)" }

    // AWS's error table, in its order; the texts are the specification's, character for character.

    package static let missingContentID = SpekeError(.missingContentID, "Missing CPIX@contentId")
    package static let missingCPIXVersion = SpekeError(.missingCPIXVersion, "Missing CPIX@version")
    package static let unsupportedCPIXVersion = SpekeError(.unsupportedCPIXVersion, "Unsupported CPIX@version")

    /// `kid` is the `ContentKey@kid` as the request wrote it.
    package static func missingEncryptionScheme(kid: String) -> SpekeError {
        SpekeError(.missingEncryptionScheme, "Missing ContentKey@commonEncryptionScheme for KID \(kid)")
    }

    package static let mixedEncryptionSchemes = SpekeError(.mixedEncryptionSchemes, "Non compliant ContentKey@commonEncryptionScheme combination")

    /// `systemID` is the `DRMSystem@systemId` as the request wrote it.
    package static func schemeIncompatible(systemID: String) -> SpekeError {
        SpekeError(.schemeIncompatibleWithDRMSystem, "ContentKey@commonEncryptionScheme non compatible with DRMSystem \(systemID)")
    }

    package static let unsupportedSpekeVersion = SpekeError(.unsupportedSpekeVersion, "Unsupported SPEKE version")
    package static let malformedContract = SpekeError(.malformedContract, "Malformed encryption contract")
    package static let contractNotSupported = SpekeError(.contractNotSupported, "Requested CPIX encryption contract not supported")
    package static let missingContract = SpekeError(.missingContract, "Missing CPIX encryption contract")

    // Ours, in the same style.

    package static func malformedDocument(_ detail: String) -> SpekeError {
        SpekeError(.malformedDocument, "Malformed CPIX document: \(detail)")
    }

    package static func unsupportedDRMSystem(systemID: String) -> SpekeError {
        SpekeError(.unsupportedDRMSystem, "Unsupported DRMSystem@systemId \(systemID)")
    }

    package static func invalidDeliveryCertificate(_ detail: String) -> SpekeError {
        SpekeError(.invalidDeliveryCertificate, "Invalid DeliveryData certificate: \(detail)")
    }

    package static func keyIssuing(_ detail: String) -> SpekeError {
        SpekeError(.keyIssuing, httpStatus: 500, "Key provider error: \(detail)")
    }

    package static func crypto(_ detail: String) -> SpekeError {
        SpekeError(.crypto, httpStatus: 500, "Key provider error: \(detail)")
    }

    /// A document the reader refused: 413 when too large, else 422 with the reader's reason.
    package init(_ error: XMLReadError) {
        if case .tooLarge = error.reason {
            self.init(.documentTooLarge, httpStatus: 413, "CPIX document too large: \(error)")
        } else {
            self.init(.malformedDocument, "Malformed CPIX document: \(error)")
        }
    }
}
