#if canImport(Glibc)
    import Glibc
#endif

/// Which files may hold a secret when it is loaded: who besides this process could read it.
///
/// ``ownerOnly`` is the rule for every file an operator names. It follows symlinks (Kubernetes
/// mounts each key of a Secret as a symlink into `..data`) and judges the file itself:
/// - nobody outside the owner and group may read or write it (no bit of `0o007`);
/// - the group may read it only when the group is one of this process's groups (a Secret volume
///   with `defaultMode: 0440` and the pod's `fsGroup`), never write it;
/// - it is owned by this process's user or by root (who could read it anyway).
/// Anything else is refused with the path, the mode and the fix.
public struct SecretFileAccess: Sendable, Hashable {
    let checksMode: Bool

    /// Private keys, ASks, DASks, provisioning data, key-encryption keys and token secrets.
    public static let ownerOnly = SecretFileAccess(checksMode: true)

    /// No check, for the repository's own test credentials only (Fixtures/, published on purpose and
    /// checked out 0644 by git, which keeps no modes beyond the executable bit): `ksm demo`,
    /// `loadgen`, `bench` and `admin seed-demo` read them through `--fixtures`. Never production.
    package static let publicTestFixtures = SecretFileAccess(checksMode: false)

    /// Why the file's owner, group and mode let someone else read it; nil when they do not.
    static func exposure(path: String, mode: UInt32, owner: UInt32, group: UInt32, user: UInt32, groups: Set<UInt32>) -> String? {
        let octal = String(mode & 0o777, radix: 8)
        if mode & 0o007 != 0 {
            return "secret file \(path) is readable or writable by other users (mode \(octal)); run chmod 600 \(path) (or 0440 with the pod's fsGroup)"
        }
        if mode & 0o020 != 0 {
            return "secret file \(path) is writable by its group (mode \(octal)); run chmod 600 \(path)"
        }
        if mode & 0o040 != 0, !groups.contains(group) {
            return
                "secret file \(path) is readable by group \(group), which this process is not in (mode \(octal)); run chmod 600 \(path), or give it this process's group"
        }
        if owner != user, owner != 0 {
            return "secret file \(path) belongs to user \(owner), neither this process's user (\(user)) nor root; run chown \(user) \(path)"
        }
        return nil
    }

    /// This process's effective user and every group it holds.
    static func processIdentity() -> (user: UInt32, groups: Set<UInt32>) {
        var groups: Set<UInt32> = [getegid()]
        let count = getgroups(0, nil)
        if count > 0 {
            var list = [gid_t](repeating: 0, count: Int(count))
            let n = getgroups(count, &list)
            if n > 0 { groups.formUnion(list.prefix(Int(n))) }
        }
        return (geteuid(), groups)
    }
}
