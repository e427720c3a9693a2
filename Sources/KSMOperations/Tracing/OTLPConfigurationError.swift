import KSMService

/// A tracing setting that cannot be used, found once at start-up. The description names the setting
/// and what is wrong with it; it never repeats a header value (those carry API keys).
public struct OTLPConfigurationError: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }
}
