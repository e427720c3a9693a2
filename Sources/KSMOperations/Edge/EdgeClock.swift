import KSMService

/// The wall clock the edge checks tokens with: the worker's own (``LicenseProcessor/currentTimeMilliseconds()``).
package enum EdgeClock {
    package static let wallMilliseconds: @Sendable () -> Int64 = { LicenseProcessor.currentTimeMilliseconds() }
}
