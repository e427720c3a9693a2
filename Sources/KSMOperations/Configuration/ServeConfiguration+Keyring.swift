import Foundation
import KSMService

extension ServeConfiguration {
    /// Loads every key-encryption key: the files of `--kek`/`KSM_KEK_FILES`, and the keys of
    /// `KSM_KEKS` (a Kubernetes Secret as env), which is read once and then removed from this
    /// process's environment so no child process inherits it.
    package func keyring() throws(KeyFile.Error) -> KeyEncryptionKeyring {
        let hexKeys = getenv("KSM_KEKS").map { String(cString: $0) }
        if hexKeys != nil { unsetenv("KSM_KEKS") }
        return try KeyFile.keyring(files: keyEncryptionKeyFiles, hexKeys: hexKeys)
    }
}
