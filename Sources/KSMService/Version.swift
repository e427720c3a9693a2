/// The version `ksm --version` prints and spans and metrics report.
///
/// A constant rather than `git describe` at build time: SwiftPM has no build-time hook without a
/// plugin, and a release bumps this line in the same commit as its tag.
package enum KSMVersion {
    package static let current = "0.1.0"
}
