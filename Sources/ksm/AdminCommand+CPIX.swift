import ArgumentParser
import FairPlay
import Foundation
import KSMOperations
import KSMService
import Licensing
import Logging
import Wire

/// `ksm admin export-cpix` and `import-cpix`: content keys as CPIX files, for packagers that read
/// a file instead of calling SPEKE (Unified Streaming's `--cpix`, Shaka Packager's raw keys), and
/// for keys made by another key provider (docs/speke.md, "CPIX files").
///
/// Exit statuses: 0 done; 64 a command-line mistake (a period spec, a track type, a KID count, an
/// unreadable certificate or key file); 65 (`EX_DATAERR`) a document that cannot be read or used
/// (not well-formed, a DTD or entity, a key without a value, a MAC that does not check); 1 at run
/// time (an unknown tenant, a KEK not given, Redis, a conflicting stored key).
extension AdminCommand {
    struct ExportCPIX: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export-cpix",
            abstract:
                "Issue content keys as ksm speke does and write them as a CPIX 2.3 document for a packager that reads CPIX files. Holds keys: in the clear unless --recipient-certificate is given."
        )
        @OptionGroup var connection: Connection
        @Option(help: "Tenant ID.") var tenant: String
        @Option(name: .customLong("content-id"), help: "Content ID (CPIX@contentId), as a SPEKE request names it.") var contentID: String
        @Option(
            name: .customLong("period"),
            help:
                "Key period: INDEX, START[/END] (xs:dateTime, e.g. 2026-11-28T12:00:00Z; named t<start ms>) or INDEX@START[/END]; times write rotation schedules; repeatable. Default: no periods (VOD)."
        )
        var periods: [String] = []
        @Option(
            name: .customLong("track"),
            help:
                "Intended track type of a key (VIDEO, AUDIO, SD, HD, HD1, HD2, UHD, UHD1, UHD2, STEREO_AUDIO, ALL, SD+HD1, ...); repeatable. Default: VIDEO and AUDIO."
        )
        var tracks: [String] = []
        @Option(
            name: .customLong("kid"),
            help: "KID (UUID) of each key, period by period, tracks in --track order; repeatable. Default: derived from tenant, content, period and track.")
        var kids: [String] = []
        @Option(help: "Recipient certificate (PEM or DER X.509, RSA 2048+): the keys are encrypted for it.") var recipientCertificate: String?
        @Option(help: "Where to write the document (mode 600). Default: standard output.") var out: String?
        @Option(help: "Key-encryption key ID=PATH, as for ksm serve; repeatable. Environment: KSM_KEK_FILES (comma-separated), KSM_KEKS.")
        var kek: [String] = []

        func run() async throws {
            do {
                try await export()
            } catch let error as CPIXFileError {
                throw CPIXCommand.report(error, command: "export-cpix")
            } catch let error as KeyFile.Error {
                throw CPIXCommand.report(CPIXFileError(.invalidArgument, error.description), command: "export-cpix")
            }
        }

        private func export() async throws {
            let tenantID = try AdminCommand.identifier(tenant, "tenant")
            let keyIDs = try kids.isEmpty ? nil : CPIXExportRequest.keyIDs(kids)
            let request = CPIXExportRequest(
                tenant: tenantID, contentID: contentID, periods: try periods.map { spec throws(CPIXFileError) in try CPIXExportPeriod(spec: spec) },
                trackTypes: tracks.isEmpty ? CPIXExportRequest.defaultTrackTypes : tracks.map { $0.uppercased() }, keyIDs: keyIDs,
                recipientCertificateDER: try recipientCertificate.map { path throws(CPIXFileError) in try CPIXCommand.certificateDER(path) })
            _ = try request.slots()
            let keyring = try CPIXCommand.keyring(kek)
            let logger = CPIXCommand.logger()
            let exporter = CPIXExporter(store: try connection.store(), keyring: keyring, logger: logger)
            let export = try await exporter.export(request)
            // With the document on standard output, the report goes to standard error.
            let report = out == nil ? FileHandle.standardError : FileHandle.standardOutput
            if let out {
                try CPIXCommand.writeSecretFile(export.document, to: out)
            } else {
                FileHandle.standardOutput.write(Data(export.document))
            }
            for key in export.keys { report.write(Data("exported \(key.uri) kid \(key.keyID)\n".utf8)) }
            let place = out.map { "to \($0)" } ?? "to standard output"
            report.write(
                Data(
                    "exported \(export.keys.count) key(s) of \(contentID) for tenant \(tenant) \(place), \(export.isEncrypted ? "encrypted for the recipient certificate" : "in the clear")\n"
                        .utf8))
            if !export.isEncrypted {
                FileHandle.standardError.write(
                    Data(
                        "ksm admin export-cpix: warning: the document holds the content keys in the clear; keep it like a key file, or export with --recipient-certificate\n"
                            .utf8))
            }
        }
    }

    struct ImportCPIX: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import-cpix",
            abstract:
                "Store the content keys of a CPIX document (a packager's or another key provider's) for a tenant, under their skd:// asset IDs; refuses to change a stored key unless --replace."
        )
        @OptionGroup var connection: Connection
        @Option(help: "Tenant ID.") var tenant: String
        @Option(help: "CPIX document, or - for standard input.") var file: String
        @Option(help: "Recipient private key (PEM or DER, mode 600) when the keys are encrypted for us.") var privateKey: String?
        @Flag(help: "Overwrite assets whose stored key differs (players holding the old key fail). Default: refuse and write nothing.")
        var replace = false
        @Option(help: "IV (16 bytes hex) for keys without ContentKey@explicitIV: the IV the packager encrypted with. Default: such keys are refused.")
        var defaultIV: String?
        @Option(help: "Key-encryption key ID=PATH, as for ksm serve; repeatable. Environment: KSM_KEK_FILES (comma-separated), KSM_KEKS.")
        var kek: [String] = []

        func run() async throws {
            do {
                try await importKeys()
            } catch let error as CPIXFileError {
                throw CPIXCommand.report(error, command: "import-cpix")
            } catch let error as KeyFile.Error {
                throw CPIXCommand.report(CPIXFileError(.invalidArgument, error.description), command: "import-cpix")
            }
        }

        private func importKeys() async throws {
            let tenantID = try AdminCommand.identifier(tenant, "tenant")
            var iv: [UInt8]? = nil
            if let defaultIV {
                guard let bytes = [UInt8](hexString: defaultIV), bytes.count == 16 else {
                    throw CPIXFileError(.invalidArgument, "--default-iv must be 16 bytes of hex")
                }
                iv = bytes
            }
            let privateKey = try privateKey.map { path throws(CPIXFileError) in try CPIXCommand.privateKey(path) }
            let bytes = try CPIXCommand.readDocument(file)
            let keyring = try CPIXCommand.keyring(kek)
            var document = try CPIXKeyDocument(bytes: bytes, privateKey: privateKey)
            defer { document.cleanse() }
            let importer = CPIXKeyImporter(issuer: PackagerKeyIssuer(store: try connection.store(), keyring: keyring, logger: CPIXCommand.logger()))
            let outcome = try await importer.run(document, options: CPIXKeyImporter.Options(tenant: tenantID, replace: replace, defaultIV: iv))
            for (placement, action) in outcome.keys {
                print("\(action.rawValue) \(placement.uri) kid \(placement.keyID)")
            }
            let count = { (action: CPIXKeyImporter.Action) in outcome.keys.filter { $0.action == action }.count }
            print(
                "imported \(outcome.keys.count) key(s) for tenant \(tenant): \(count(.stored)) stored, \(count(.unchanged)) unchanged, \(count(.replaced)) replaced; \(outcome.schedulesWritten) rotation schedule(s) written"
            )
            if let failure = outcome.periodFailure {
                throw CPIXFileError(
                    .store, "the keys are stored, but their key periods were not recorded (\(failure)); import the file again to write the rotation schedules")
            }
        }
    }
}

/// What the two CPIX commands share: reading the key files, writing the document, reporting.
enum CPIXCommand {
    /// Prints `error` as `ksm admin <command>: error: ...` and gives its exit status (64, 65 or 1).
    static func report(_ error: CPIXFileError, command: String) -> ExitCode {
        FileHandle.standardError.write(Data("ksm admin \(command): error: \(CommandFailure.clean(error.message))\n".utf8))
        switch error.code {
        case .invalidArgument: return ExitCode(64)
        case .invalidDocument: return ExitCode(65)
        default: return ExitCode(1)
        }
    }

    /// Warnings on standard error; nothing the issuer logs holds a key.
    static func logger() -> Logger {
        var logger = Logger(label: "ksm.cpix", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = .warning
        return logger
    }

    /// The KEKs of `--kek` and of `KSM_KEK_FILES` and `KSM_KEKS`, read as `ksm serve` reads them.
    static func keyring(_ pairs: [String]) throws -> KeyEncryptionKeyring {
        var files: [String: String] = [:]
        let fromEnvironment = ProcessInfo.processInfo.environment["KSM_KEK_FILES"].map { $0.split(separator: ",").map(String.init) } ?? []
        for (pair, option) in fromEnvironment.map({ ($0, "KSM_KEK_FILES") }) + pairs.map({ ($0, "--kek") })
        where !pair.allSatisfy(\.isWhitespace) {
            let (id, path) = try KeyFile.idAndValue(pair.trimmingCharacters(in: .whitespaces), option: option)
            files[id] = path
        }
        return try ServeConfiguration.keyring(files: files)
    }

    /// A certificate file, PEM (`BEGIN CERTIFICATE`) or DER, as DER.
    static func certificateDER(_ path: String) throws(CPIXFileError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path), data.count <= 1 << 20 else {
            throw CPIXFileError(.invalidArgument, "--recipient-certificate \(path) cannot be read")
        }
        let bytes = Array(data)
        let text = String(decoding: bytes, as: UTF8.self)
        guard let begin = text.range(of: "-----BEGIN CERTIFICATE-----") else { return bytes }
        guard let end = text.range(of: "-----END CERTIFICATE-----", range: begin.upperBound..<text.endIndex),
            let der = Base64.decode(String(text[begin.upperBound..<end.lowerBound].filter { !$0.isWhitespace })), !der.isEmpty
        else { throw CPIXFileError(.invalidArgument, "--recipient-certificate \(path) is not a PEM certificate") }
        return der
    }

    /// The recipient's private key, from a file only its owner can read.
    static func privateKey(_ path: String) throws(CPIXFileError) -> RSAPrivateKey {
        var bytes: [UInt8]
        do { bytes = try SecretFile.read(path) } catch { throw CPIXFileError(.invalidArgument, "--private-key: \(error.description)") }
        defer { FairPlayCrypto.cleanse(&bytes) }
        do {
            return try RSAPrivateKey(pemOrDER: bytes)
        } catch {
            throw CPIXFileError(.invalidArgument, "--private-key \(path) is not an RSA private key (PEM or DER)")
        }
    }

    /// The document at `path` (`-`: standard input), refused past the reader's size limit.
    static func readDocument(_ path: String) throws(CPIXFileError) -> [UInt8] {
        let limit = CPIXKeyDocument.limits.maximumBytes
        let handle: FileHandle
        if path == "-" {
            handle = FileHandle.standardInput
        } else {
            guard let opened = FileHandle(forReadingAtPath: path) else { throw CPIXFileError(.invalidArgument, "--file \(path) cannot be read") }
            handle = opened
        }
        defer { if path != "-" { try? handle.close() } }
        let data: Data?
        do { data = try handle.read(upToCount: limit + 1) } catch { throw CPIXFileError(.invalidArgument, "--file \(path) cannot be read") }
        let bytes = Array(data ?? Data())
        guard bytes.count <= limit else {
            throw CPIXFileError(.invalidDocument, "--file \(path) is larger than \(limit) bytes, more than a CPIX document of keys needs")
        }
        return bytes
    }

    /// Writes `bytes` to `path` with mode 600: a new file beside it, created 600 before a byte
    /// is written, then renamed over `path`, so no reader ever sees a partial document or one
    /// others can read.
    static func writeSecretFile(_ bytes: [UInt8], to path: String) throws(CPIXFileError) {
        let temporary = path + ".tmp-\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw CPIXFileError(.invalidArgument, "--out \(path): \(temporary) cannot be created (errno \(errno))") }
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard n > 0 else {
                close(descriptor)
                unlink(temporary)
                throw CPIXFileError(.invalidArgument, "--out \(path): writing failed (errno \(errno))")
            }
            written += n
        }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard synced, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw CPIXFileError(.invalidArgument, "--out \(path): the document cannot be put in place (errno \(errno))")
        }
    }
}
