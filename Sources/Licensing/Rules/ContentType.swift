/// The kind of content a key protects, as Apple's server JSON names it.
package enum ContentType: String, Hashable, Sendable, CaseIterable, Codable {
    case sd, hd, uhd, audio
}
