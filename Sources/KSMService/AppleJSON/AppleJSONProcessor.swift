import FairPlay
import Foundation
import Licensing
import Wire

/// Apple's server JSON interface (SDK 26): `fairplay-streaming-request` in, `fairplay-streaming-response` out.
///
/// A drop-in for Apple's reference `local` tool: `create-ckc` builds CKCs from the content keys in the
/// request, applying Apple's default business rules per content type; `get-client-info` reports what
/// the SPC says. Every operation gets a result with a status; a request that cannot be read at all gets
/// one result carrying `paramErr`.
public struct AppleJSONProcessor: Sendable {
    /// The key server that opens each operation's SPC and builds its CKC.
    public let server: KeyServerModule

    /// Creates a processor over a key server; keep one per process, like the key server.
    public init(server: KeyServerModule) { self.server = server }

    /// Processes one request document; never throws: errors become statuses in the response.
    public func process(_ input: [UInt8]) -> AppleJSONResponse {
        let operations: [JSONFields]
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

    /// The request's operations, each one object's members.
    static func operations(_ input: [UInt8]) throws -> (AppleJSONResponse.Operation, [JSONFields]) {
        guard case .object(let root) = try LenientJSON.value(input) else { throw RequestError(reason: "request is not a JSON object") }
        guard case .object(let request)? = root["fairplay-streaming-request"] else {
            throw RequestError(reason: "request has no \"fairplay-streaming-request\" object")
        }
        for kind in [AppleJSONResponse.Operation.createCKC, .getClientInfo] {
            if let value = request[kind.rawValue] {
                guard case .array(let elements) = value else { throw RequestError(reason: "\"\(kind.rawValue)\" is not an array of objects") }
                var list: [JSONFields] = []
                list.reserveCapacity(elements.count)
                for element in elements {
                    guard case .object(let members) = element else { throw RequestError(reason: "\"\(kind.rawValue)\" is not an array of objects") }
                    list.append(JSONFields(members))
                }
                return (kind, list)
            }
        }
        throw RequestError(reason: "request has neither \"create-ckc\" nor \"get-client-info\"")
    }

    /// The operation's `id` as SDK 26 answers it: a number, read from a non-negative integer or a
    /// numeric string, else 0.
    static func id(_ op: JSONFields) -> JSONValue {
        switch op.value("id") {
        case .integer(let n)? where n >= 0: return .integer(n)
        case .string(let text)?: return .integer(Int64(exactly: UInt64(text) ?? 0) ?? 0)
        default: return .integer(0)
        }
    }

    static func failure(_ op: JSONFields, _ error: FairPlayError) -> AppleJSONResponse.Result {
        AppleJSONResponse.Result(id: id(op), failure: error)
    }

    func open(_ op: JSONFields) throws(FairPlayError) -> SPCRequest {
        guard case .string(let text)? = op.value("spc") else { throw FairPlayError(.parameterError, "operation has no \"spc\" string") }
        // Strict padded base64 without Foundation first; what only Foundation's lenient decoder takes
        // (line breaks, white space) still decodes as it always did.
        guard let bytes = Base64.decode(text) ?? Data(base64Encoded: text, options: [.ignoreUnknownCharacters]).map(Array.init), !bytes.isEmpty else {
            throw FairPlayError(.parserError, "\"spc\" is not base64")
        }
        return try server.open(bytes)
    }

    func clientInfo(_ op: JSONFields) -> AppleJSONResponse.Result {
        do {
            let request = try open(op)
            var out = AppleJSONResponse.Result(id: Self.id(op), info: ClientInfo(request))
            out.status = .noError
            return out
        } catch {
            return Self.failure(op, error)
        }
    }

    func createCKC(_ op: JSONFields) -> AppleJSONResponse.Result {
        do throws(FairPlayError) {
            // SDK 26 reads the operation's JSON before it opens the SPC, so a JSON fault decides first.
            let asset = try AssetInfo(op)
            let request = try open(op)
            var out = AppleJSONResponse.Result(id: Self.id(op), info: ClientInfo(request))
            let ckc = try server.makeCKC(for: request, try Self.content(asset, request))
            // SDK 26 builds the CKC of a check-in but leaves it out of the answer.
            if !asset.checkIn { out.ckc = ckc }
            out.status = .noError
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
            // version 1 with a zero content ID. Whether the client gets this TLLV or the same terms as
            // a persistable content key duration is OfflineDelivery's rule (CKCBuilder applies it).
            if offline.streamID != nil || offline.titleID != nil {
                content.offlineKey = OfflineKey(
                    version: 2, contentID: offline.streamID ?? [UInt8](repeating: 0, count: 16), storageDuration: offline.rentalSeconds,
                    playbackDuration: offline.playbackSeconds, titleID: offline.titleID ?? [UInt8](repeating: 0, count: 16))
            } else {
                content.offlineKey = OfflineKey(
                    version: 1, contentID: [UInt8](repeating: 0, count: 16), storageDuration: offline.rentalSeconds, playbackDuration: offline.playbackSeconds)
            }
        } else if let lease = asset.leaseSeconds {
            content.keyDuration = .lease(lease)
        }
        return content
    }
}
