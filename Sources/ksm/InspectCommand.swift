import ArgumentParser
import FairPlay
import Foundation
import KSMService
import Wire

/// `ksm inspect`: everything an SPC says, as JSON.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Open an SPC and print what it says (get-client-info fields, asset ID, every TLLV tag)."
    )

    @OptionGroup var options: ServerOptions

    @Argument(help: "The SPC: a binary file, a base64 text file, or - for standard input.")
    var spc: String

    func run() throws {
        let server = try options.keyServer()
        var bytes = try CommandSupport.read(spc)
        // Accept base64 text as well as raw bytes: an SPC never starts with printable base64 + newline only.
        if let text = String(bytes: bytes, encoding: .ascii), let decoded = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)) {
            bytes = Array(decoded)
        }
        var out: [String: JSONValue]
        var status = FairPlayStatus.noError
        do {
            let request = try server.open(bytes)
            out = ClientInfo.fields(request)
            out["status"] = .integer(Int64(FairPlayStatus.noError.rawValue))
            out["spc-version"] = .integer(Int64(request.spcVersion))
            out["certificate-hash"] = .string(request.credential.certificateHash.hexString)
            out["credential"] = .string(request.credential.name)
            out["asset-id-hex"] = .string(Array(request.assetID).hexString)
            out["protocol-version-used"] = .integer(Int64(request.payload.protocolVersionUsed))
            out["protocol-versions-supported"] = .array(request.payload.protocolVersionsSupported.map { .integer(Int64($0)) })
            out["return-request"] = .array(request.payload.returnRequest.map { .string($0.description) })
            out["supported-key-formats"] = .array(request.payload.supportedKeyFormats.map { .string(TLLVTag($0).description) })
            out["tllvs"] = .array(
                request.payload.tllvs.blocks.map { block in
                    var entry: [String: JSONValue] = [
                        "tag": .string(block.tag.description), "value-length": .integer(Int64(block.value.count)),
                        "block-length": .integer(Int64(block.raw.count - 16)),
                    ]
                    if let name = block.tag.name { entry["name"] = .string(name) }
                    return .object(entry)
                })
        } catch {
            status = error.status
            out = ["status": .integer(Int64(error.status.rawValue)), "status-name": .string(error.status.name), "reason": .string(error.description)]
        }
        CommandSupport.printJSON(.object(out))
        if status != .noError { throw ExitCode(2) }
    }
}
