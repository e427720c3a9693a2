import ArgumentParser
import FairPlay
import Foundation
import KSMService
import Wire

/// `ksm process`: Apple's server JSON in, Apple's response JSON out (a drop-in for Apple's `local` tool).
struct ProcessCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "process",
        abstract: "Answer a fairplay-streaming-request JSON document (create-ckc, get-client-info)."
    )

    @OptionGroup var server: ServerOptions

    @Argument(help: "The request JSON file, or - for standard input.")
    var request: String = "-"

    func run() throws {
        let input = try CommandSupport.read(request)
        let output = AppleJSONProcessor(server: try server.keyServer()).processToJSON(input)
        FileHandle.standardOutput.write(Data(output))
    }
}

/// The credentials and protocol options of the one-shot commands.
struct ServerOptions: ParsableArguments {
    @Option(name: .long, help: "Apple's certificates.json shape; file paths inside are relative to it.")
    var credentials: String

    @Option(name: .long, help: "Path to Apple's libfpscrypto, for credentials with provisioning data.")
    var fpscryptoLibrary: String?

    @Option(
        name: .long, help: "Which SDK's libfpscrypto --fpscrypto-library is: sdk26 (struct version 2, opens SPC v3) or sdk5 (struct version 1). Default: sdk26."
    )
    var fpscryptoGeneration: String = FPSCryptoLibrary.Generation.default.name

    @Option(
        name: .long, parsing: .upToNextOption,
        help:
            "Protocol versions accepted as the version a device used. Default: any, as Apple's SDK 26 (a device listing versions it does not use is never refused)."
    )
    var protocolVersions: [UInt32] = []

    func keyServer() throws -> KeyServerModule {
        try CommandSupport.server(
            credentials: credentials, library: fpscryptoLibrary,
            generation: try CommandSupport.generation(fpscryptoGeneration), versions: protocolVersions)
    }
}

/// Shared plumbing of the one-shot commands.
enum CommandSupport {
    static func server(credentials: String, library: String?, generation: FPSCryptoLibrary.Generation = .default, versions: [UInt32]) throws -> KeyServerModule
    {
        do {
            return try CredentialsFile.keyServer(credentials: credentials, library: library, generation: generation, versions: versions)
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// The libfpscrypto generation called `name`; an unknown name stops start-up.
    static func generation(_ name: String) throws -> FPSCryptoLibrary.Generation {
        guard let generation = FPSCryptoLibrary.Generation(name: name) else {
            let known = FPSCryptoLibrary.Generation.all.map(\.name).joined(separator: " or ")
            throw ValidationError("unknown --fpscrypto-generation \(name): \(known)")
        }
        return generation
    }

    /// Prints `value` on standard output, indented, with keys sorted, for people and `jq` alike.
    static func printJSON(_ value: JSONValue) {
        var writer = JSONWriter()
        writer.writeIndented(value)
        writer.newline()
        FileHandle.standardOutput.write(Data(writer.bytes))
    }

    static func read(_ path: String) throws -> [UInt8] {
        if path == "-" { return Array(FileHandle.standardInput.readDataToEndOfFile()) }
        guard let data = FileManager.default.contents(atPath: path) else { throw ValidationError("cannot read \(path)") }
        return Array(data)
    }
}
