import Foundation

/// An RSA key pair and self-signed certificate made by the `openssl` command for one test, in a
/// directory of its own: what a packager puts in a CPIX `DeliveryData` to receive encrypted keys,
/// and the private key it opens them with. The same recipe as SpekeTests' `PackagerCertificate`,
/// here so that suites of other targets (KSMOperationsTests, EndToEndTests) can make one too.
package struct TestRecipientCertificate: Sendable {
    /// Holds the files; `remove()` deletes it.
    package let directory: URL
    /// The certificate, DER.
    package let certificateDER: [UInt8]

    /// The private key, PEM (PKCS #8), mode 600.
    package var privateKeyPath: String { directory.appendingPathComponent("key.pem").path }
    /// The certificate, PEM.
    package var certificatePEMPath: String { directory.appendingPathComponent("cert.pem").path }
    /// The certificate, DER.
    package var certificateDERPath: String { directory.appendingPathComponent("cert.der").path }

    /// The `openssl` executable, when the host has one.
    package static let openssl: String? = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// A new key pair of `bits` bits and a certificate valid for a day.
    package static func make(bits: Int = 2048) async throws -> TestRecipientCertificate {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cpix-recipient-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let tool = URL(fileURLWithPath: openssl ?? "/usr/bin/openssl")
        let made = try await ProcessRunner.run(
            tool,
            [
                "req", "-x509", "-newkey", "rsa:\(bits)", "-nodes", "-keyout", directory.appendingPathComponent("key.pem").path, "-out",
                directory.appendingPathComponent("cert.pem").path, "-days", "1", "-subj", "/CN=cpix-test-recipient",
            ], mergeOutput: true, timeout: .seconds(120))
        guard made.succeeded else { throw Failure(output: String(decoding: made.stdout, as: UTF8.self)) }
        let converted = try await ProcessRunner.run(
            tool,
            ["x509", "-in", directory.appendingPathComponent("cert.pem").path, "-outform", "DER", "-out", directory.appendingPathComponent("cert.der").path],
            mergeOutput: true, timeout: .seconds(60))
        guard converted.succeeded else { throw Failure(output: String(decoding: converted.stdout, as: UTF8.self)) }
        // The key is a secret file: the commands that read it refuse one others can read.
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: directory.appendingPathComponent("key.pem").path)
        return TestRecipientCertificate(directory: directory, certificateDER: Array(try Data(contentsOf: directory.appendingPathComponent("cert.der"))))
    }

    /// Deletes the files.
    package func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// The private key's PEM text.
    package func privateKeyPEM() throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: privateKeyPath)))
    }

    /// `openssl` failed; its output says why.
    package struct Failure: Error, CustomStringConvertible {
        package let output: String
        package var description: String { "openssl failed: \(output)" }
    }
}
