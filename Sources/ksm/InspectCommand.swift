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
        var out: [String: Any]
        do {
            let request = try server.open(bytes)
            out = ClientInfo.fields(request)
            out["status"] = FairPlayStatus.noError.rawValue
            out["spc-version"] = request.spcVersion
            out["certificate-hash"] = request.credential.certificateHash.hexString
            out["credential"] = request.credential.name
            out["asset-id-hex"] = Array(request.assetID).hexString
            out["protocol-version-used"] = request.payload.protocolVersionUsed
            out["protocol-versions-supported"] = request.payload.protocolVersionsSupported
            out["return-request"] = request.payload.returnRequest.map(\.description)
            out["supported-key-formats"] = request.payload.supportedKeyFormats.map { TLLVTag($0).description }
            out["tllvs"] = request.payload.tllvs.blocks.map { block -> [String: Any] in
                var entry: [String: Any] = ["tag": block.tag.description, "value-length": block.value.count, "block-length": block.raw.count - 16]
                if let name = block.tag.name { entry["name"] = name }
                return entry
            }
        } catch {
            out = ["status": error.status.rawValue, "status-name": error.status.name, "reason": error.description]
        }
        let data = try JSONSerialization.data(withJSONObject: out, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        FileHandle.standardOutput.write(data + Data("\n".utf8))
        if (out["status"] as? Int32) != 0 { throw ExitCode(2) }
    }
}
