/// Which file modes a secret file may have when it is loaded.
public struct SecretFileAccess: Sendable, Hashable {
    /// Mode bits that refuse a file: readable by its group or by others.
    let forbiddenBits: Int

    /// The rule for every file an operator names (`ksm serve`, `process`, `inspect`, `admin`):
    /// private keys, ASks, DASks, provisioning data, key-encryption keys and token secrets must not
    /// be readable by group or others (`chmod 600`).
    public static let ownerOnly = SecretFileAccess(forbiddenBits: 0o044)

    /// No check, for the repository's own test credentials only (Fixtures/, published on purpose and
    /// checked out 0644 by git, which keeps no modes beyond the executable bit): `ksm demo`,
    /// `loadgen`, `bench` and `admin seed-demo` read them through `--fixtures`. Never production.
    public static let publicTestFixtures = SecretFileAccess(forbiddenBits: 0)
}
