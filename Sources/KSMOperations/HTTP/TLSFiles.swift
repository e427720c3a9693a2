import FairPlay
import Foundation
import HummingbirdCore
import HummingbirdHTTP2
import KSMService
import NIOCore
import NIOSSL

/// The PEM certificate chain and private key an HTTP service of `ksm` serves TLS with: two
/// settings (`--tls-certificate`, `--tls-private-key`, each with an environment variable) given
/// together or not at all, resolved flags over environment, and read once at start-up into a
/// swift-nio-ssl server configuration that hummingbird serves HTTP/2 and HTTP/1.1 in.
///
/// Shared by every HTTP service so each has the same flags, the same rules and the same messages;
/// a service only chooses its environment variables (``Names``). Where each path came from (flag
/// or variable) is kept, so a message names the setting the operator wrote.
package struct TLSFiles: Sendable, Hashable {
    /// How one service spells the two settings.
    package struct Names: Sendable, Hashable {
        package var certificateFlag = "--tls-certificate"
        package var privateKeyFlag = "--tls-private-key"
        package var certificateEnvironment: String
        package var privateKeyEnvironment: String

        /// `KSM_SPEKE` gives `KSM_SPEKE_TLS_CERTIFICATE` and `KSM_SPEKE_TLS_PRIVATE_KEY`.
        package init(environmentPrefix: String) {
            certificateEnvironment = "\(environmentPrefix)_TLS_CERTIFICATE"
            privateKeyEnvironment = "\(environmentPrefix)_TLS_PRIVATE_KEY"
        }

        /// Help text for the certificate option.
        package var certificateHelp: String {
            "PEM certificate chain (server certificate first) to serve HTTPS with; needs \(privateKeyFlag). Default: plain HTTP. Environment: \(certificateEnvironment)."
        }

        /// Help text for the private key option.
        package var privateKeyHelp: String {
            "PEM private key of \(certificateFlag) (unencrypted; readable by this user and its groups only). Environment: \(privateKeyEnvironment)."
        }
    }

    package var certificatePath: String
    package var privateKeyPath: String
    /// The flag or environment variable each path was read from.
    package var certificateSource: String
    package var privateKeySource: String

    package init(certificatePath: String, privateKeyPath: String, certificateSource: String, privateKeySource: String) {
        self.certificatePath = certificatePath
        self.privateKeyPath = privateKeyPath
        self.certificateSource = certificateSource
        self.privateKeySource = privateKeySource
    }

    /// Flags over the environment; an empty value counts as not given. Nil when neither setting is
    /// given (plain HTTP). One without the other is a problem, never a fallback to plain HTTP: a
    /// service that meant to serve HTTPS and silently did not would take tokens and keys in the clear.
    package static func resolve(
        certificate: String?, privateKey: String?, environment: [String: String], names: Names
    ) throws(ConfigurationProblem) -> TLSFiles? {
        func given(_ flag: String?, _ flagName: String, _ variable: String) -> (String, String)? {
            if let flag, !flag.isEmpty { return (flag, flagName) }
            if let value = environment[variable], !value.isEmpty { return (value, variable) }
            return nil
        }
        let certificate = given(certificate, names.certificateFlag, names.certificateEnvironment)
        let privateKey = given(privateKey, names.privateKeyFlag, names.privateKeyEnvironment)
        switch (certificate, privateKey) {
        case (nil, nil):
            return nil
        case (let (certificatePath, certificateSource)?, let (privateKeyPath, privateKeySource)?):
            return TLSFiles(
                certificatePath: certificatePath, privateKeyPath: privateKeyPath, certificateSource: certificateSource, privateKeySource: privateKeySource)
        case (let (_, source)?, nil):
            throw ConfigurationProblem(
                .missing, source: names.privateKeyFlag,
                message:
                    "\(source) is given but no TLS private key: pass \(names.privateKeyFlag) or set \(names.privateKeyEnvironment) too (or neither, for plain HTTP)."
            )
        case (nil, let (_, source)?):
            throw ConfigurationProblem(
                .missing, source: names.certificateFlag,
                message:
                    "\(source) is given but no TLS certificate: pass \(names.certificateFlag) or set \(names.certificateEnvironment) too (or neither, for plain HTTP)."
            )
        }
    }

    /// The lines `--check-config` prints: the paths and where they came from, never the contents.
    package static func summary(_ files: TLSFiles?, width: Int) -> [String] {
        func label(_ name: String) -> String { name.padding(toLength: width, withPad: " ", startingAt: 0) }
        guard let files else { return ["\(label("tls"))= off (plain HTTP)"] }
        return [
            "\(label("tls-certificate"))= \(files.certificatePath) (\(files.certificateSource))",
            "\(label("tls-private-key"))= \(files.privateKeyPath) (\(files.privateKeySource))",
        ]
    }

    /// Both files read and checked as a TLS server configuration: the chain parsed, the key parsed
    /// (refused when others than this user and its groups could read it, as every secret file
    /// `ksm` reads), and a TLS context built from the two, which fails unless the key is the
    /// certificate's. So a wrong file stops the start, naming the setting and the path, instead of
    /// failing every handshake. No message quotes a file's contents.
    package func serverConfiguration() throws(ConfigurationProblem) -> ServerTLS {
        let chain: [NIOSSLCertificate]
        do {
            let bytes = try Self.readPublicFile(certificatePath)
            chain = try NIOSSLCertificate.fromPEMBytes(bytes)
        } catch let reason as FileReason {
            throw ConfigurationProblem(.unreadableFile, source: certificateSource, message: "\(certificateSource) \(certificatePath) \(reason.text).")
        } catch {
            throw ConfigurationProblem(
                .unreadableFile, source: certificateSource,
                message: "\(certificateSource) \(certificatePath) is not a PEM certificate chain (-----BEGIN CERTIFICATE----- blocks).")
        }
        guard !chain.isEmpty else {
            throw ConfigurationProblem(
                .unreadableFile, source: certificateSource, message: "\(certificateSource) \(certificatePath) holds no PEM certificate.")
        }

        var keyBytes: [UInt8]
        do throws(SecretFileError) {
            keyBytes = try SecretFile.read(privateKeyPath)
        } catch {
            throw ConfigurationProblem(.unreadableFile, source: privateKeySource, message: "\(privateKeySource): \(error.reason).")
        }
        defer { FairPlayCrypto.cleanse(&keyBytes) }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(bytes: keyBytes, format: .pem)
        } catch {
            throw ConfigurationProblem(
                .unreadableFile, source: privateKeySource,
                message: "\(privateKeySource) \(privateKeyPath) is not an unencrypted PEM private key (RSA or EC).")
        }

        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        // swift-nio-ssl's server default still accepts TLS 1.0; tokens and content keys want 1.2 or later.
        configuration.minimumTLSVersion = .tlsv12
        do {
            _ = try NIOSSLContext(configuration: configuration)
        } catch {
            throw ConfigurationProblem(
                .invalidValue, source: privateKeySource,
                message:
                    "\(privateKeySource) \(privateKeyPath) is not the private key of \(certificateSource) \(certificatePath) (or the pair is not usable for TLS)."
            )
        }
        return ServerTLS(configuration: configuration)
    }

    /// The server hummingbird runs: plain HTTP/1.1, or with `tls` HTTP/2 and HTTP/1.1 inside TLS,
    /// chosen per connection by ALPN (a client that offers no ALPN gets HTTP/1.1). HTTP/2 costs
    /// nothing more here, and lets a client keep one connection for concurrent requests.
    /// `idleTimeout` closes a connection without requests (without open streams, for HTTP/2).
    package static func serverBuilder(tls: ServerTLS?, idleTimeout: Duration) throws -> HTTPServerBuilder {
        let http1 = HTTP1Channel.Configuration(idleTimeout: TimeAmount(idleTimeout))
        guard let tls else { return .http1(configuration: http1) }
        return try .http2Upgrade(
            tlsConfiguration: tls.configuration, configuration: .init(idleTimeout: idleTimeout, streamConfiguration: http1))
    }

    /// Why a file could not be read, as the end of a sentence.
    struct FileReason: Error {
        var text: String
    }

    /// The largest certificate chain read: a chain is a few kB, so anything larger is a wrong path.
    static let maximumCertificateBytes = 1 << 20

    static func readPublicFile(_ path: String) throws(FileReason) -> [UInt8] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { throw FileReason(text: "does not exist") }
        guard !isDirectory.boolValue else { throw FileReason(text: "is a directory, not a file") }
        guard FileManager.default.isReadableFile(atPath: path), let data = FileManager.default.contents(atPath: path) else {
            throw FileReason(text: "cannot be read by this process")
        }
        guard data.count <= maximumCertificateBytes else { throw FileReason(text: "holds more than \(maximumCertificateBytes) bytes") }
        return Array(data)
    }
}

/// A server's TLS configuration, read from ``TLSFiles`` and checked: what a command hands its
/// server, without the command importing swift-nio-ssl.
package struct ServerTLS: Sendable {
    package let configuration: TLSConfiguration
}
