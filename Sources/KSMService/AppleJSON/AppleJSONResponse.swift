import FairPlay
import Licensing
import Wire

/// The `fairplay-streaming-response` of Apple's server JSON interface: one result per operation.
public struct AppleJSONResponse: Sendable {
    /// The operation a request asks for; the response answers under the same name. Apple's interface
    /// has these two.
    public enum Operation: String, Sendable {
        case createCKC = "create-ckc"
        case getClientInfo = "get-client-info"
    }

    /// One operation's answer.
    public struct Result: Sendable {
        /// The operation's `id`, echoed as given (Apple's tool takes numbers or numeric strings); 0
        /// when the operation had none.
        package var id: JSONValue
        /// The operation's outcome: ``FairPlayStatus/noError`` with a CKC or client info, or why it failed.
        public var status: FairPlayStatus
        /// What the SPC says; nil when it could not be opened.
        package var info: ClientInfo?
        /// The CKC, written as base64; nil for `get-client-info`, a check-in and every failure.
        public var ckc: [UInt8]?
        /// This project's addition on failures: why, in words (never a key or SPC content).
        public var reason: String?

        package init(id: JSONValue, status: FairPlayStatus = .noError, info: ClientInfo? = nil, ckc: [UInt8]? = nil, reason: String? = nil) {
            self.id = id
            self.status = status
            self.info = info
            self.ckc = ckc
            self.reason = reason
        }

        /// A failed operation: its status and the error's description as the reason.
        package init(id: JSONValue, failure: FairPlayError) {
            self.init(id: id, status: failure.status, reason: failure.description)
        }

        /// One object, members in a fixed order: `id`, `status`, the ``ClientInfo`` fields, `ckc`, `reason`.
        package func write(to w: inout JSONWriter) {
            w.beginObject()
            w.key("id")
            w.write(id)
            w.key("status")
            w.write(integer: Int64(status.rawValue))
            info?.write(to: &w)
            if let ckc {
                w.key("ckc")
                w.write(base64: ckc)
            }
            if let reason {
                w.key("reason")
                w.write(string: reason)
            }
            w.endObject()
        }

        /// Bytes this result will about take, to size the response's buffer once.
        var estimatedSize: Int {
            (info == nil ? 48 : 640) + (ckc.map { ($0.count + 2) / 3 * 4 } ?? 0) + (reason?.utf8.count ?? 0)
        }
    }

    /// The operation answered, the response object's one key.
    public var operation: Operation
    /// One result per operation of the request, in request order.
    public var results: [Result]

    /// Creates a response from its results; ``AppleJSONProcessor/process(_:)`` makes the usual ones.
    public init(operation: Operation, results: [Result]) {
        self.operation = operation
        self.results = results
    }

    /// `{"fairplay-streaming-response": {"<operation>": [results]}}`, compact, then a newline.
    public func jsonBytes() -> [UInt8] {
        var w = JSONWriter(reservingCapacity: 64 + results.reduce(0) { $0 + $1.estimatedSize })
        w.beginObject()
        w.key("fairplay-streaming-response")
        w.beginObject()
        switch operation {
        case .createCKC: w.key("create-ckc")
        case .getClientInfo: w.key("get-client-info")
        }
        w.beginArray()
        for result in results { result.write(to: &w) }
        w.endArray()
        w.endObject()
        w.endObject()
        w.newline()
        return w.bytes
    }
}
