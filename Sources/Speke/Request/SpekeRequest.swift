/// A SPEKE v2 request: the CPIX document a packager POSTs to `/speke/v2/{tenant}/copyProtection`,
/// read and validated (see `SpekeRequest+Parsing.swift` for the rules and their sources).
///
/// Holds what the key provider needs to issue keys (``contentKeys``, ``drmSystems``, ``periods``)
/// and what ``SpekeResponseWriter`` needs to answer the same document: the elements SPEKE requires
/// to come back unchanged are kept as read.
package struct SpekeRequest: Sendable, Hashable {
    /// From the `X-Speke-Version` request header.
    package var spekeVersion: SpekeVersion
    /// `CPIX@contentId`, never empty, answered unchanged.
    package var contentID: String
    /// `CPIX@version`: `2.3` under SPEKE v2.0, `2.4` under v2.1.
    package var cpixVersion: String
    /// `CPIX@name`, when present, answered unchanged. (`CPIX@id` is ignored and not answered, as AWS requires.)
    package var name: String?
    /// The keys asked for, in document order, each KID once.
    package var contentKeys: [RequestedContentKey]
    /// The signaling asked for, in document order: one entry per (DRM system, key).
    package var drmSystems: [RequestedDRMSystem]
    /// The crypto periods of key rotation; empty for VOD.
    package var periods: [ContentKeyPeriod]
    /// The encryption contract.
    package var usageRules: [ContentKeyUsageRule]
    /// The recipients of encrypted keys; empty when keys are answered in the clear.
    package var deliveryRecipients: [DeliveryRecipient]

    /// Elements and attributes answered exactly as read.
    package var echo: Echo

    /// What the answer repeats without interpreting it.
    package struct Echo: Sendable, Hashable {
        /// `ContentKeyPeriodList`, when the request had one (AWS: "Must be echoed back unchanged").
        package var contentKeyPeriodList: XMLElementValue?
        /// `ContentKeyUsageRuleList` (AWS: the key provider "must not alter it").
        package var contentKeyUsageRuleList: XMLElementValue
        /// Attributes of the list elements (`id`), by list local name.
        package var listAttributes: [String: [XMLAttribute]]

        package init(contentKeyPeriodList: XMLElementValue?, contentKeyUsageRuleList: XMLElementValue, listAttributes: [String: [XMLAttribute]]) {
            self.contentKeyPeriodList = contentKeyPeriodList
            self.contentKeyUsageRuleList = contentKeyUsageRuleList
            self.listAttributes = listAttributes
        }
    }

    package init(
        spekeVersion: SpekeVersion, contentID: String, cpixVersion: String, name: String?, contentKeys: [RequestedContentKey],
        drmSystems: [RequestedDRMSystem], periods: [ContentKeyPeriod], usageRules: [ContentKeyUsageRule], deliveryRecipients: [DeliveryRecipient],
        echo: Echo
    ) {
        self.spekeVersion = spekeVersion
        self.contentID = contentID
        self.cpixVersion = cpixVersion
        self.name = name
        self.contentKeys = contentKeys
        self.drmSystems = drmSystems
        self.periods = periods
        self.usageRules = usageRules
        self.deliveryRecipients = deliveryRecipients
        self.echo = echo
    }
}
