import FairPlay
import Foundation

/// Reads secret files (private keys, ASks, provisioning data, key-encryption keys, token secrets):
/// refused when the mode lets group or others read them, and the read buffer is cleansed
/// (`OPENSSL_cleanse`) once copied, so the only copy left is the one the caller owns (and should
/// cleanse after use with ``FairPlayCrypto/cleanse(_:)-(inout [UInt8])``).
public enum SecretFile {
    /// Refuses the file if `access` forbids its mode. A file that does not exist passes here and
    /// fails on reading, with its own message.
    public static func check(_ path: String, access: SecretFileAccess = .ownerOnly) throws(SecretFileError) {
        guard access.forbiddenBits != 0 else { return }
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue else { return }
        if mode & access.forbiddenBits != 0 {
            throw SecretFileError(path: path, reason: "secret file \(path) is readable by group or others (mode \(String(mode & 0o777, radix: 8))); run chmod 600 \(path)")
        }
    }

    /// Checks the mode, then reads the whole file.
    public static func read(_ path: String, access: SecretFileAccess = .ownerOnly) throws(SecretFileError) -> [UInt8] {
        try check(path, access: access)
        guard var data = FileManager.default.contents(atPath: path) else {
            throw SecretFileError(path: path, reason: "cannot read secret file \(path)")
        }
        let bytes = [UInt8](data)
        data.withUnsafeMutableBytes { FairPlayCrypto.cleanse($0) }
        return bytes
    }
}
