import FairPlay
import Foundation
import Licensing

/// Apple's server JSON interface (SDK 26): `fairplay-streaming-request` in, `fairplay-streaming-response` out.
///
/// A drop-in for Apple's reference `local` tool: `create-ckc` builds CKCs from the content keys in the
/// request, applying Apple's default business rules per content type; `get-client-info` reports what
/// the SPC says. Every operation gets a result with a status; a request that cannot be read at all gets
/// one result carrying `paramErr`.
public struct AppleJSONProcessor: Sendable {
    public let server: KeyServerModule

    public init(server: KeyServerModule) { self.server = server }

    /// Processes one request document; never throws: errors become statuses in the response.
    public func process(_ input: [UInt8]) -> [String: Any] {
        let operations: [[String: Any]]
        let kind: String
        do {
            (kind, operations) = try Self.operations(input)
        } catch {
            return Self.wrap("create-ckc", [["id": 0, "status": FairPlayStatus.parameterError.rawValue, "reason": "\(error)"]])
        }
        let results = operations.map { kind == "get-client-info" ? clientInfo($0) : createCKC($0) }
        return Self.wrap(kind, results)
    }

    /// Serialized response: sorted keys so output is stable.
    public func processToJSON(_ input: [UInt8]) -> [UInt8] {
        let object = process(input)
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return Array(data) + [0x0A]
    }

    struct RequestError: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    static func operations(_ input: [UInt8]) throws -> (String, [[String: Any]]) {
        guard let root = try LenientJSON.parse(input) as? [String: Any] else { throw RequestError(reason: "request is not a JSON object") }
        guard let request = root["fairplay-streaming-request"] as? [String: Any] else {
            throw RequestError(reason: "request has no \"fairplay-streaming-request\" object")
        }
        for kind in ["create-ckc", "get-client-info"] {
            if let value = request[kind] {
                guard let list = value as? [[String: Any]] else { throw RequestError(reason: "\"\(kind)\" is not an array of objects") }
                return (kind, list)
            }
        }
        throw RequestError(reason: "request has neither \"create-ckc\" nor \"get-client-info\"")
    }

    static func wrap(_ kind: String, _ results: [[String: Any]]) -> [String: Any] {
        ["fairplay-streaming-response": [kind: results]]
    }

    /// The operation's `id` as SDK 26 answers it: a number, read from a number or a numeric string, else 0.
    static func id(_ op: [String: Any]) -> UInt64 {
        if let text = op["id"] as? String { return UInt64(text) ?? 0 }
        return AssetInfo.unsigned(op["id"]) ?? 0
    }

    static func failure(_ op: [String: Any], _ error: FairPlayError) -> [String: Any] {
        ["id": id(op), "status": error.status.rawValue, "reason": error.description]
    }

    func open(_ op: [String: Any]) throws(FairPlayError) -> SPCRequest {
        guard let text = op["spc"] as? String else { throw FairPlayError(.parameterError, "operation has no \"spc\" string") }
        guard let data = Data(base64Encoded: text, options: [.ignoreUnknownCharacters]), !data.isEmpty else {
            throw FairPlayError(.parserError, "\"spc\" is not base64")
        }
        return try server.open(Array(data))
    }

    func clientInfo(_ op: [String: Any]) -> [String: Any] {
        do {
            let request = try open(op)
            var out = ClientInfo.fields(request)
            out["id"] = Self.id(op)
            out["status"] = FairPlayStatus.noError.rawValue
            return out
        } catch {
            return Self.failure(op, error)
        }
    }

    func createCKC(_ op: [String: Any]) -> [String: Any] {
        do throws(FairPlayError) {
            // SDK 26 reads the operation's JSON before it opens the SPC, so a JSON fault decides first.
            let asset = try AssetInfo(op)
            let request = try open(op)
            var out = ClientInfo.fields(request)
            out["id"] = Self.id(op)
            let content = try Self.content(asset, request)
            let ckc = try server.makeCKC(for: request, content)
            // SDK 26 builds the CKC of a check-in but leaves it out of the answer.
            if !asset.checkIn { out["ckc"] = Data(ckc).base64EncodedString() }
            out["status"] = FairPlayStatus.noError.rawValue
            return out
        } catch {
            return Self.failure(op, error)
        }
    }

    /// Applies Apple's SDK 26 business rules to one operation's asset info and builds what the CKC carries.
    static func content(_ asset: AssetInfo, _ request: SPCRequest) throws(FairPlayError) -> CKCContent {
        let rules = AppleDefaultRules.Request(
            contentType: asset.contentType, hdcp: asset.hdcp, lease: asset.leaseSeconds != nil, offline: asset.offline != nil, checkIn: asset.checkIn)
        let level = try AppleDefaultRules.check(rules, payload: request.payload)
        var content = CKCContent(
            contentKey: asset.contentKey, contentIV: asset.contentIV, hdcp: asset.hdcp, requiredSecurityLevel: level,
            libraryContentType: asset.contentType == .audio ? 3 : 1)
        // Only SDK 26's library reads it: "cbcs" with video may use the video session key.
        content.encryptionScheme = asset.encryptionScheme.flatMap { EncryptionScheme(appleName: $0) }
        if let offline = asset.offline {
            // SDK 26 populateTagServerOfflineKey: version 2 when a stream or title ID is given, else
            // version 1 with a zero content ID; clients without capability bit 3 get the same terms as
            // a persistable content key duration (CKCBuilder).
            if offline.streamID != nil || offline.titleID != nil {
                content.offlineKey = OfflineKey(
                    version: 2, contentID: offline.streamID ?? [UInt8](repeating: 0, count: 16), storageDuration: offline.rentalSeconds,
                    playbackDuration: offline.playbackSeconds, titleID: offline.titleID ?? [UInt8](repeating: 0, count: 16))
            } else {
                content.offlineKey = OfflineKey(version: 1, contentID: [UInt8](repeating: 0, count: 16), storageDuration: offline.rentalSeconds, playbackDuration: offline.playbackSeconds)
            }
        } else if let lease = asset.leaseSeconds {
            content.keyDuration = .lease(lease)
        }
        return content
    }
}
