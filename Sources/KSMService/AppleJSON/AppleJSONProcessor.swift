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
    public func process(_ input: [UInt8]) -> AppleJSONResponse {
        let operations: [[String: Any]]
        let kind: AppleJSONResponse.Operation
        do {
            (kind, operations) = try Self.operations(input)
        } catch {
            return AppleJSONResponse(operation: .createCKC, results: [.init(id: .integer(0), status: .parameterError, reason: "\(error)")])
        }
        let results = operations.map { kind == .getClientInfo ? clientInfo($0) : createCKC($0) }
        return AppleJSONResponse(operation: kind, results: results)
    }

    /// The serialized response: compact JSON, keys in a fixed order, one line.
    public func processToJSON(_ input: [UInt8]) -> [UInt8] {
        process(input).jsonBytes()
    }

    struct RequestError: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    /// The request's operations, each an object in Foundation's shapes (``LenientJSON/foundationObject(_:)``,
    /// which the rules in ``content(_:_:)`` read) but for its `id`, kept as the ``JSONValue`` it was
    /// so that it is echoed exactly.
    static func operations(_ input: [UInt8]) throws -> (AppleJSONResponse.Operation, [[String: Any]]) {
        guard case .object(let root) = try LenientJSON.value(input) else { throw RequestError(reason: "request is not a JSON object") }
        guard case .object(let request)? = root["fairplay-streaming-request"] else {
            throw RequestError(reason: "request has no \"fairplay-streaming-request\" object")
        }
        for kind in [AppleJSONResponse.Operation.createCKC, .getClientInfo] {
            if let value = request[kind.rawValue] {
                guard case .array(let elements) = value else { throw RequestError(reason: "\"\(kind.rawValue)\" is not an array of objects") }
                var list: [[String: Any]] = []
                list.reserveCapacity(elements.count)
                for element in elements {
                    guard case .object(let members) = element else { throw RequestError(reason: "\"\(kind.rawValue)\" is not an array of objects") }
                    var op = [String: Any](minimumCapacity: members.count)
                    for (key, member) in members { op[key] = key == "id" ? member : LenientJSON.foundationObject(member) }
                    list.append(op)
                }
                return (kind, list)
            }
        }
        throw RequestError(reason: "request has neither \"create-ckc\" nor \"get-client-info\"")
    }

    /// The operation's `id`, echoed as given (Apple's tool takes numbers or numeric strings).
    static func id(_ op: [String: Any]) -> JSONValue { op["id"] as? JSONValue ?? .integer(0) }

    static func failure(_ op: [String: Any], _ error: FairPlayError) -> AppleJSONResponse.Result {
        AppleJSONResponse.Result(id: id(op), failure: error)
    }

    func open(_ op: [String: Any]) throws(FairPlayError) -> SPCRequest {
        guard let text = op["spc"] as? String else { throw FairPlayError(.parameterError, "operation has no \"spc\" string") }
        // Strict padded base64 without Foundation first; what only Foundation's lenient decoder takes
        // (line breaks, white space) still decodes as it always did.
        guard let bytes = Base64.decode(text) ?? Data(base64Encoded: text, options: [.ignoreUnknownCharacters]).map(Array.init), !bytes.isEmpty else {
            throw FairPlayError(.parserError, "\"spc\" is not base64")
        }
        return try server.open(bytes)
    }

    func clientInfo(_ op: [String: Any]) -> AppleJSONResponse.Result {
        do {
            let request = try open(op)
            var out = AppleJSONResponse.Result(id: Self.id(op), info: ClientInfo(request))
            out.status = .noError
            return out
        } catch {
            return Self.failure(op, error)
        }
    }

    func createCKC(_ op: [String: Any]) -> AppleJSONResponse.Result {
        do {
            let request = try open(op)
            var out = AppleJSONResponse.Result(id: Self.id(op), info: ClientInfo(request))
            if op["check-in"] as? Bool == true {
                // A check-in (secure invalidation) answers with the sync report and no CKC.
                guard request.payload.sync != nil else { throw FairPlayError(.parameterError, "check-in requested but the SPC has no valid sync TLLV") }
                out.status = .noError
                return out
            }
            let content = try Self.content(op, request)
            out.ckc = try server.makeCKC(for: request, content)
            out.status = .noError
            return out
        } catch let error as FairPlayError {
            return Self.failure(op, error)
        } catch {
            return Self.failure(op, FairPlayError(.internalError, "\(error)"))
        }
    }

    /// Reads `asset-info` and applies Apple's SDK 26 rules for it.
    static func content(_ op: [String: Any], _ request: SPCRequest) throws(FairPlayError) -> CKCContent {
        guard let infos = op["asset-info"] as? [[String: Any]], infos.count == 1 else {
            throw FairPlayError(.parameterError, "\"asset-info\" must be an array with exactly one object")
        }
        let info = infos[0]
        let key = try hexField(info, "content-key")
        let iv = try hexField(info, "content-iv") ?? [UInt8](repeating: 0, count: 16)
        var hdcp = HDCPRequirement.type0
        if let value = info["hdcp-type"] {
            let number = (value as? Int) ?? (value as? String).flatMap { Int($0) }
            guard let n = number, let requirement = HDCPRequirement(hdcpType: n) else {
                throw FairPlayError(.parameterError, "\"hdcp-type\" must be -1, 0 or 1")
            }
            hdcp = requirement
        }
        var content = CKCContent(contentKey: key, contentIV: iv, hdcp: hdcp)
        if let typeName = info["content-type"] as? String {
            guard let type = ContentType(rawValue: typeName) else {
                throw FairPlayError(.parameterError, "\"content-type\" must be sd, hd, uhd or audio")
            }
            let requirement = AppleDefaultRules.requirement(for: type, requestedHDCP: hdcp)
            try AppleDefaultRules.check(ClientSecurity(request.payload), capabilities: request.payload.capabilities, against: requirement)
            content.hdcp = requirement.hdcp
            content.requiredSecurityLevel = requirement.securityLevel
            content.libraryContentType = type == .audio ? 3 : 1
        }
        let lease = (info["lease-duration"] as? Int).flatMap { $0 > 0 ? UInt32(exactly: $0) : nil }
        if let offline = info["offline-hls"] {
            guard let o = offline as? [String: Any] else { throw FairPlayError(.parameterError, "\"offline-hls\" is not an object") }
            guard lease == nil else { throw FairPlayError(.parameterError, "a lease together with an offline key is not allowed") }
            let streamID = try idField(o, "stream-id")
            let titleID = try idField(o, "title-id")
            let storage = UInt32(clamping: (o["rental-duration"] as? Int) ?? 0)
            let playback = UInt32(clamping: (o["playback-duration"] as? Int) ?? 0)
            content.offlineKey = OfflineKey.make(for: request.payload.capabilities, streamID: streamID, titleID: titleID, storageDuration: storage, playbackDuration: playback)
        } else if let lease {
            content.keyDuration = .lease(lease)
        }
        return content
    }

    /// A 16-byte hex field; "0x" allowed. Nil when absent.
    static func hexField(_ object: [String: Any], _ name: String) throws(FairPlayError) -> [UInt8]? {
        guard let value = object[name] else { return nil }
        guard var text = value as? String else { throw FairPlayError(.parameterError, "\"\(name)\" is not a hex string") }
        if text.hasPrefix("0x") { text.removeFirst(2) }
        guard let bytes = [UInt8](hexString: text), bytes.count == 16 else { throw FairPlayError(.parameterError, "\"\(name)\" is not 16 bytes of hex") }
        return bytes
    }

    /// Offline stream and title IDs: 16 bytes of hex, or a shorter text padded with zeros.
    static func idField(_ object: [String: Any], _ name: String) throws(FairPlayError) -> [UInt8] {
        guard let text = object[name] as? String else { throw FairPlayError(.parameterError, "\"offline-hls\".\"\(name)\" is missing") }
        if let bytes = [UInt8](hexString: text), bytes.count == 16 { return bytes }
        let utf8 = Array(text.utf8)
        guard utf8.count <= 16 else { throw FairPlayError(.parameterError, "\"offline-hls\".\"\(name)\" is neither 16 bytes of hex nor at most 16 characters") }
        return utf8 + [UInt8](repeating: 0, count: 16 - utf8.count)
    }
}
