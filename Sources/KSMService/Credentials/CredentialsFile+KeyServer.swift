import FairPlay

extension CredentialsFile {
    /// Why the credentials give no key server; `description` names the file or the credential.
    package struct KeyServerError: Error, CustomStringConvertible, Sendable {
        package var description: String
    }

    /// A key server over the credentials file at `credentials` (with Apple's libfpscrypto at
    /// `library` for provisioning-data credentials), accepting the protocol `versions` (empty: any).
    package static func keyServer(
        credentials: String, library: String?, generation: FPSCryptoLibrary.Generation = .default,
        versions: [UInt32]
    ) throws(KeyServerError) -> KeyServerModule {
        do {
            let loaded = try load(path: credentials, libraryPath: library, libraryGeneration: generation)
            return KeyServerModule(credentials: try CredentialStore(loaded), versionPolicy: ProtocolVersionPolicy(accepted: versions))
        } catch let error as LoadError {
            throw KeyServerError(description: error.description)
        } catch {
            throw KeyServerError(description: "credentials: \(error)")
        }
    }
}
