import FairPlay
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads secret files (private keys, ASks, provisioning data, key-encryption keys, token secrets):
/// refused when someone other than this process's user and groups could read them (``SecretFileAccess``), and the read buffer is cleansed
/// (`OPENSSL_cleanse`) once copied, so the only copy left is the one the caller owns (and should
/// cleanse after use with ``FairPlayCrypto/cleanse(_:)-(inout [UInt8])``).
public enum SecretFile {
    /// Refuses the file if `access` forbids who may read it (``SecretFileAccess``), judged on the
    /// file a symlink chain ends at. A file that does not exist passes here and fails on reading,
    /// with its own message.
    public static func check(_ path: String, access: SecretFileAccess = .ownerOnly) throws(SecretFileError) {
        guard access.checksMode else { return }
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        let identity = SecretFileAccess.processIdentity()
        if let reason = SecretFileAccess.exposure(path: path, mode: UInt32(info.st_mode), owner: info.st_uid, group: info.st_gid,
                                                  user: identity.user, groups: identity.groups) {
            throw SecretFileError(path: path, reason: reason)
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
