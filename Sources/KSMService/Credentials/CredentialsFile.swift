import FairPlay
import Foundation
import Wire

/// Loads Apple's `certificates.json` credentials file shape.
///
/// `{"certificates": [{"certificate", "1024-private-key", "2048-private-key", "ask" | "dask" |
/// "provisioning-data"}]}`; every value is a file path relative to the credentials file, or for a
/// secret `env:NAME` (the secret's text from environment variable NAME, read once and removed; base64
/// for provisioning data). `ask` and `dask` hold hex; `provisioning-data` (the file's raw bytes, handed
/// to the library as they are) needs Apple's libfpscrypto (`libraryPath`, of `libraryGeneration`).
///
/// The secret files (private keys, `ask`, `dask`, `provisioning-data`) go through ``SecretFile``:
/// refused when group or others may read them (unless `access` is
/// ``SecretFileAccess/publicTestFixtures``), and their read buffers cleansed once parsed.
public enum CredentialsFile {
    /// Why the credentials file could not be loaded: unreadable, not JSON, a missing or malformed field,
    /// or a secret file others may read.
    public struct LoadError: Error, CustomStringConvertible {
        /// What was wrong, naming the file or field; never a secret's content.
        public let reason: String
        public var description: String { "credentials: \(reason)" }
    }

    /// - Parameter libraryGeneration: which SDK's libfpscrypto `libraryPath` is. Default: SDK 26.
    public static func load(
        path: String, libraryPath: String? = nil, libraryGeneration: FPSCryptoLibrary.Generation = .default, access: SecretFileAccess = .ownerOnly
    ) throws(LoadError) -> [ApplicationCredential] {
        let url = URL(fileURLWithPath: path)
        let base = url.deletingLastPathComponent()
        let root: JSONValue
        do {
            root = try LenientJSON.value(try readFile(url))
        } catch let error as LenientJSON.InvalidJSON {
            throw LoadError(reason: "\(path) is not valid JSON: \(error.reason)")
        } catch let error as LoadError {
            throw error
        } catch {
            throw LoadError(reason: "\(error)")
        }
        guard case .array(let list)? = (try? JSONFields(root))?.value("certificates"), !list.isEmpty else {
            throw LoadError(reason: "\(path) has no \"certificates\" array of objects")
        }
        var entries: [JSONFields] = []
        for (index, element) in list.enumerated() {
            guard case .object(let members) = element else { throw LoadError(reason: "\(path) has no \"certificates\" array of objects") }
            entries.append(JSONFields(members, prefix: "certificates[\(index)]"))
        }
        var library: FPSCryptoLibrary?
        var credentials: [ApplicationCredential] = []
        for (index, entry) in entries.enumerated() {
            func file(_ key: String) throws(LoadError) -> [UInt8]? {
                guard let value = entry.members[key] else { return nil }
                guard case .string(let relative) = value, !relative.isEmpty else { throw LoadError(reason: "certificates[\(index)].\(key) is not a file path") }
                let fileURL = relative.hasPrefix("/") ? URL(fileURLWithPath: relative) : base.appendingPathComponent(relative)
                return try readFile(fileURL)
            }
            /// A secret file: mode checked, read buffer cleansed by ``SecretFile``. A value
            /// `env:NAME` reads the secret from environment variable NAME instead (PEM or hex text as
            /// it is; provisioning data as base64), which is then removed from the environment.
            func secretFile(_ key: String) throws(LoadError) -> [UInt8]? {
                guard let value = entry.members[key] else { return nil }
                guard case .string(let relative) = value, !relative.isEmpty else { throw LoadError(reason: "certificates[\(index)].\(key) is not a file path") }
                if relative.hasPrefix("env:") {
                    return try secretFromEnvironment(String(relative.dropFirst(4)), field: "certificates[\(index)].\(key)", base64: key == "provisioning-data")
                }
                let fileURL = relative.hasPrefix("/") ? URL(fileURLWithPath: relative) : base.appendingPathComponent(relative)
                do throws(SecretFileError) {
                    return try SecretFile.read(fileURL.path, access: access)
                } catch {
                    throw LoadError(reason: "certificates[\(index)].\(key): \(error.reason)")
                }
            }
            func hexFile(_ key: String) throws(LoadError) -> [UInt8]? {
                guard var bytes = try secretFile(key) else { return nil }
                defer { FairPlayCrypto.cleanse(&bytes) }
                guard let key16 = [UInt8](hexString: String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)), key16.count == 16
                else {
                    throw LoadError(reason: "certificates[\(index)].\(key) does not hold 16 bytes of hex")
                }
                return key16
            }
            guard let certificate = try file("certificate") else { throw LoadError(reason: "certificates[\(index)] has no \"certificate\"") }
            let source: SessionKeySource
            if let ask = try hexFile("ask") {
                source = .applicationSecretKey(ask)
            } else if let dask = try hexFile("dask") {
                source = .fixedDerivedKey(dask)
            } else if let provisioning = try secretFile("provisioning-data") {
                let loaded: FPSCryptoLibrary
                if let library {
                    loaded = library
                } else {
                    guard let libraryPath else {
                        throw LoadError(
                            reason: "certificates[\(index)] uses provisioning data, which needs Apple's libfpscrypto: pass --fpscrypto-library PATH")
                    }
                    do { loaded = try FPSCryptoLibrary(path: libraryPath, generation: libraryGeneration) } catch { throw LoadError(reason: error.reason) }
                    library = loaded
                }
                source = .cryptoLibrary(loaded, provisioningData: provisioning)
            } else {
                throw LoadError(reason: "certificates[\(index)] has none of \"ask\", \"dask\" or \"provisioning-data\"")
            }
            do {
                // The PEM text is cleansed as soon as OpenSSL holds the key.
                func privateKey(_ name: String) throws -> RSAPrivateKey? {
                    guard var pem = try secretFile(name) else { return nil }
                    defer { FairPlayCrypto.cleanse(&pem) }
                    return try RSAPrivateKey(pemOrDER: pem)
                }
                let key1024 = try privateKey("1024-private-key")
                let key2048 = try privateKey("2048-private-key")
                let name = URL(fileURLWithPath: (try? entry.string("certificate")).flatMap { $0 } ?? "certificate-\(index)").deletingPathExtension()
                    .lastPathComponent
                credentials.append(
                    try ApplicationCredential(
                        name: name, certificateDER: certificate, privateKey1024: key1024, privateKey2048: key2048, sessionKeySource: source))
            } catch let error as FairPlayError {
                throw LoadError(reason: "certificates[\(index)]: \(error.reason)")
            } catch let error as LoadError {
                throw error
            } catch {
                throw LoadError(reason: "certificates[\(index)]: \(error)")
            }
        }
        return credentials
    }

    /// Reads a secret from the environment variable `name` and removes the variable, so no child
    /// process inherits it. Never quotes the value in an error.
    static func secretFromEnvironment(_ name: String, field: String, base64: Bool) throws(LoadError) -> [UInt8] {
        guard !name.isEmpty, let raw = getenv(name) else {
            throw LoadError(reason: "\(field): environment variable \(name.isEmpty ? "(empty name)" : name) is not set")
        }
        var bytes = Array(UnsafeBufferPointer(start: UnsafeRawPointer(raw).assumingMemoryBound(to: UInt8.self), count: strlen(raw)))
        // Overwrite the variable's memory before dropping it (getenv points into the environment block).
        memset(raw, 0, strlen(raw))
        unsetenv(name)
        guard !bytes.isEmpty else { throw LoadError(reason: "\(field): environment variable \(name) is empty") }
        guard base64 else { return bytes }
        defer { FairPlayCrypto.cleanse(&bytes) }
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let decoded = Data(base64Encoded: text) else { throw LoadError(reason: "\(field): environment variable \(name) is not base64") }
        return Array(decoded)
    }

    static func readFile(_ url: URL) throws(LoadError) -> [UInt8] {
        do {
            return Array(try Data(contentsOf: url))
        } catch {
            throw LoadError(reason: "cannot read \(url.path): \((error as NSError).localizedDescription)")
        }
    }
}
