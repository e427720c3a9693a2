import KSMService

/// A tracing setting that cannot be used, found once at start-up. The description names the setting
/// and what is wrong with it; it never repeats a header value (those carry API keys).
package struct OTLPConfigurationError: Error, Sendable, CustomStringConvertible {
    package var description: String

    package init(_ description: String) { self.description = description }
}
