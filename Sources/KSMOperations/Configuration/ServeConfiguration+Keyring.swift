import Foundation
import KSMService

extension ServeConfiguration {
    /// Loads every key-encryption key (``keyring(files:)`` over `--kek`/`KSM_KEK_FILES`).
    package func keyring() throws(KeyFile.Error) -> KeyEncryptionKeyring {
        try Self.keyring(files: keyEncryptionKeyFiles)
    }

    /// Loads every key-encryption key: the files named, and the keys of `KSM_KEKS` (a Kubernetes
    /// Secret as env), which is read once, overwritten in place and removed from this process's
    /// environment, so neither a child process nor a later reader of the environment block finds
    /// it. The copy read is wiped once parsed. `ksm speke` reads its keys the same way.
    package static func keyring(files: [String: String]) throws(KeyFile.Error) -> KeyEncryptionKeyring {
        var hexKeys: [UInt8] = []
        if let raw = getenv("KSM_KEKS") {
            let count = strlen(raw)
            hexKeys = Array(UnsafeBufferPointer(start: UnsafeRawPointer(raw).assumingMemoryBound(to: UInt8.self), count: count))
            memset(raw, 0, count)
            unsetenv("KSM_KEKS")
        }
        return try KeyFile.keyring(files: files, hexKeys: &hexKeys)
    }
}
