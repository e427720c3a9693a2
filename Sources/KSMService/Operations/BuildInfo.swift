/// What build of ksm runs: the `version` label of `ksm_build_info`.
public enum BuildInfo {
    /// Set by a release build's `KSM_VERSION` at compile time would need a plugin; until then one
    /// string moved by hand with each release, "-dev" between them.
    public static let version = "0.17.0-dev"
}
