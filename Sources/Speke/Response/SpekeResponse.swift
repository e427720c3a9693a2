/// A successful SPEKE answer: the CPIX document and the headers the service sends with it (status 200).
package struct SpekeResponse: Sendable, Hashable {
    /// The CPIX document, UTF-8.
    package var body: [UInt8]
    /// `X-Speke-Version`: the request's value, which "cannot be modified by the key provider".
    package var spekeVersion: String
    /// `X-Speke-User-Agent`: identifies the key provider (mandatory in SPEKE v2).
    package var userAgent: String

    /// `Content-Type`: `application/xml`, as MediaPackage's guide lists it (AWS's verification
    /// suite accepts a charset only when it is utf-8; none is simplest).
    package static let contentType = "application/xml"

    package init(body: [UInt8], spekeVersion: String, userAgent: String) {
        self.body = body
        self.spekeVersion = spekeVersion
        self.userAgent = userAgent
    }

    /// Every response header, in the order to send them.
    package var headerFields: [(name: String, value: String)] {
        [("Content-Type", Self.contentType), ("X-Speke-Version", spekeVersion), ("X-Speke-User-Agent", userAgent)]
    }
}
