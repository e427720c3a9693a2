import Foundation
import KSMTestSupport

/// A packager's RSA key pair and self-signed certificate, made by the `openssl` command for one
/// test, in a directory of its own: what an encryptor would put in `DeliveryData`.
struct PackagerCertificate {
    let directory: URL
    let certificateDER: [UInt8]
    let privateKeyPEM: [UInt8]

    var privateKeyPath: String { directory.appendingPathComponent("key.pem").path }

    static let openssl: String? = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first { FileManager.default.isExecutableFile(atPath: $0) }

    static func make(bits: Int = 2048) async throws -> PackagerCertificate {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("speke-cert-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let result = try await ProcessRunner.run(
            URL(fileURLWithPath: openssl ?? "/usr/bin/openssl"),
            [
                "req", "-x509", "-newkey", "rsa:\(bits)", "-nodes", "-keyout", directory.appendingPathComponent("key.pem").path, "-outform", "DER", "-out",
                directory.appendingPathComponent("cert.der").path, "-days", "1", "-subj", "/CN=speke-test-packager",
            ], mergeOutput: true, timeout: .seconds(120))
        guard result.succeeded else { throw CertificateFailure(output: String(decoding: result.stdout, as: UTF8.self)) }
        return PackagerCertificate(
            directory: directory, certificateDER: Array(try Data(contentsOf: directory.appendingPathComponent("cert.der"))),
            privateKeyPEM: Array(try Data(contentsOf: directory.appendingPathComponent("key.pem"))))
    }

    struct CertificateFailure: Error, CustomStringConvertible {
        let output: String
        var description: String { "openssl req failed: \(output)" }
    }

    /// A `DeliveryDataList` naming this certificate, in AWS's request shape (`DeliveryKey` only),
    /// the base64 wrapped at 64 characters as PEM bodies are.
    var deliveryDataList: String {
        let base64 = Data(certificateDER).base64EncodedString(options: .lineLength64Characters)
        return """
            <cpix:DeliveryDataList><cpix:DeliveryData id="origin-1"><cpix:DeliveryKey><ds:X509Data><ds:X509Certificate>
            \(base64)
            </ds:X509Certificate></ds:X509Data></cpix:DeliveryKey></cpix:DeliveryData></cpix:DeliveryDataList>
            """
    }
}
