import FairPlay

/// One `cpix:DeliveryData` of a request: a recipient (the packager) whose certificate the content
/// keys of the answer are encrypted for (AWS SPEKE v2, "Content key encryption").
///
/// Equality and hashing go by the certificate bytes and the echoed element; the parsed key follows from them.
package struct DeliveryRecipient: Sendable, Hashable {
    /// The DER X.509 certificate of `DeliveryKey/ds:X509Data/ds:X509Certificate`.
    package var certificateDER: [UInt8]
    /// Its RSA public key, 2048 bits or more (AWS: "SPEKE requires 2048 RSA-based certificates").
    package var publicKey: RSAPublicKey
    /// The request's `DeliveryKey` element, answered unchanged.
    package var deliveryKey: XMLElementValue
    /// The request's `DeliveryData` attributes (`id`, `name`, ...), answered unchanged.
    package var attributes: [XMLAttribute]

    package init(certificateDER: [UInt8], publicKey: RSAPublicKey, deliveryKey: XMLElementValue, attributes: [XMLAttribute]) {
        self.certificateDER = certificateDER
        self.publicKey = publicKey
        self.deliveryKey = deliveryKey
        self.attributes = attributes
    }

    package static func == (lhs: DeliveryRecipient, rhs: DeliveryRecipient) -> Bool {
        lhs.certificateDER == rhs.certificateDER && lhs.deliveryKey == rhs.deliveryKey && lhs.attributes == rhs.attributes
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(certificateDER)
        hasher.combine(deliveryKey)
        hasher.combine(attributes)
    }
}
