import Foundation
import Wire

/// The five request shapes `ksm edge` reads (docs/edge.md, "Request shapes"), as a player sends
/// them, and how each one's answer carries the CKC back.
package enum HTTPLoadShape: String, Sendable, CaseIterable, Codable {
    case raw, base64, form, json, apple

    /// A request body and the `Content-Type` the shape's reference client sends with it.
    package struct Body: Sendable {
        package var bytes: [UInt8]
        package var contentType: String
    }

    /// The body a player of this shape posts for `spc` (its `skd://` URI is `assetID`); the JSON
    /// shape names `priority` when one is given (`continuity` for a key rotation's renewal).
    ///
    /// The form sends the base64 unencoded, as Apple's Safari sample does (its `+` arrive raw), the
    /// asset ID percent-encoded, and Apple's shape posts JSON as `application/x-www-form-urlencoded`,
    /// as `fps_safari_support.js` does.
    package func body(spc: [UInt8], assetID: String, priority: String? = nil) -> Body {
        let base64 = Base64.encode(spc)
        switch self {
        case .raw:
            return Body(bytes: spc, contentType: "application/octet-stream")
        case .base64:
            return Body(bytes: Array(base64.utf8), contentType: "text/plain")
        case .form:
            let asset = assetID.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            return Body(bytes: Array("spc=\(base64)&assetId=\(asset)".utf8), contentType: "application/x-www-form-urlencoded")
        case .json:
            let priorityMember = priority.map { ",\"priority\":\"\($0)\"" } ?? ""
            return Body(bytes: Array("{\"spc\":\"\(base64)\",\"asset-id\":\"\(assetID)\"\(priorityMember)}".utf8), contentType: "application/json")
        case .apple:
            let text = "{\"fairplay-streaming-request\":{\"version\":1,\"streaming-keys\":[{\"id\":1,\"uri\":\"\(assetID)\",\"spc\":\"\(base64)\"}]}}"
            return Body(bytes: Array(text.utf8), contentType: "application/x-www-form-urlencoded")
        }
    }

    /// The CKC in a 200 answer of this shape; nil when the answer does not carry one where the shape
    /// puts it.
    package func ckc(fromAnswer body: [UInt8]) -> [UInt8]? {
        switch self {
        case .raw:
            return body
        case .base64, .form:
            return Base64.decode(body)
        case .json:
            guard case .object(let object)? = try? JSONValue(parsing: body), case .string(let text)? = object["ckc"] else { return nil }
            return Base64.decode(text)
        case .apple:
            guard case .object(let object)? = try? JSONValue(parsing: body), case .object(let response)? = object["fairplay-streaming-response"],
                case .array(let keys)? = response["streaming-keys"], case .object(let key)? = keys.first, case .string(let text)? = key["ckc"]
            else { return nil }
            return Base64.decode(text)
        }
    }

    /// Shapes from a comma-separated list (`raw,json`); nil names the first unknown one.
    package static func list(_ text: String) -> Result<[HTTPLoadShape], UnknownShape> {
        var shapes: [HTTPLoadShape] = []
        for part in text.split(separator: ",") {
            let name = part.trimmingCharacters(in: .whitespaces)
            guard let shape = HTTPLoadShape(rawValue: name) else { return .failure(UnknownShape(name: name)) }
            shapes.append(shape)
        }
        return shapes.isEmpty ? .failure(UnknownShape(name: text)) : .success(shapes)
    }

    /// A shape name that is none of the five.
    package struct UnknownShape: Error, CustomStringConvertible {
        package var name: String
        package var description: String {
            "unknown request shape \"\(name)\": use a comma-separated list of \(HTTPLoadShape.allCases.map(\.rawValue).joined(separator: ", "))"
        }
    }
}
