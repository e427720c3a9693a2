import FairPlay
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Reads secret files (private keys, ASks, provisioning data, key-encryption keys, token secrets):
/// refused when someone other than this process's user and groups could read them (``SecretFileAccess``), and the read buffer is cleansed
/// (`OPENSSL_cleanse`) once copied, so the only copy left is the one the caller owns (and should
/// cleanse after use with ``FairPlayCrypto/cleanse(_:)-(inout [UInt8])``).
package enum SecretFile {
    /// The largest secret file read: keys, certificates and provisioning data are a few KB, so
    /// anything larger is a wrong path (a log, a device) rather than a secret.
    package static let maximumBytes = 1 << 20

    /// Opens the file once and judges what was opened: its `fstat` (owner, group, mode, a regular
    /// file) through ``SecretFileAccess``, then reads it from the same descriptor. Judging the path
    /// and then reading it would leave a window in which the path could be swapped for another
    /// file; a descriptor cannot be. The file a symlink chain ends at is the one judged (Kubernetes
    /// mounts each key of a Secret as a symlink). A failed `fstat` is a refusal, never a pass.
    package static func read(_ path: String, access: SecretFileAccess = .ownerOnly) throws(SecretFileError) -> [UInt8] {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard descriptor >= 0 else {
            throw SecretFileError(path: path, reason: "cannot open secret file \(path): \(String(cString: strerror(errno)))")
        }
        defer { Glibc.close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw SecretFileError(path: path, reason: "cannot check secret file \(path) (fstat: \(String(cString: strerror(errno)))); refused")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw SecretFileError(path: path, reason: "secret file \(path) is not a regular file; give the path of the file itself")
        }
        if access.checksMode {
            let identity = SecretFileAccess.processIdentity()
            if let reason = SecretFileAccess.exposure(
                path: path, mode: UInt32(info.st_mode), owner: info.st_uid, group: info.st_gid,
                user: identity.user, groups: identity.groups)
            {
                throw SecretFileError(path: path, reason: reason)
            }
        }
        guard info.st_size <= maximumBytes else {
            throw SecretFileError(path: path, reason: "secret file \(path) holds \(info.st_size) bytes, more than the \(maximumBytes) a secret file may")
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
        var count = 0
        while true {
            if count == bytes.count {
                // The file grew after fstat: read on, within the cap.
                guard bytes.count <= maximumBytes else {
                    FairPlayCrypto.cleanse(&bytes)
                    throw SecretFileError(path: path, reason: "secret file \(path) holds more than the \(maximumBytes) bytes a secret file may")
                }
                bytes.append(contentsOf: repeatElement(0, count: 4096))
            }
            let n = bytes.withUnsafeMutableBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return Glibc.read(descriptor, base + count, buffer.count - count)
            }
            if n == 0 { break }
            if n < 0 {
                if errno == EINTR { continue }
                let reason = String(cString: strerror(errno))
                FairPlayCrypto.cleanse(&bytes)
                throw SecretFileError(path: path, reason: "cannot read secret file \(path): \(reason)")
            }
            count += n
        }
        let content = Array(bytes[..<count])
        FairPlayCrypto.cleanse(&bytes)
        return content
    }
}
