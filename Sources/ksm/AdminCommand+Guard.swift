import ArgumentParser
import Licensing
import RedisStore

extension AdminCommand {
    /// `ksm admin guard`: a tenant's rate limit and anti-replay window (docs/hostile-input.md).
    /// Replaces the tenant's settings as a whole, so an option left out switches that guard off.
    struct PutGuard: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "guard", abstract: "Set a tenant's per-account rate limit and SPC anti-replay window (replaces both).")
        @OptionGroup var connection: Connection
        @Option(help: "Tenant ID.") var tenant: String
        @Option(help: "At most this many jobs per account per rate window (the workers' --rate-window-ms, default 1 s). Omit: unlimited.")
        var rateLimit: Int?
        @Option(help: "Refuse an SPC sent again by another job within this many milliseconds. Omit or 0: off.")
        var replayWindowMs: Int64 = 0

        func run() async throws {
            if let rateLimit, rateLimit < 0 { throw ValidationError("--rate-limit must not be negative") }
            guard replayWindowMs >= 0 else { throw ValidationError("--replay-window-ms must not be negative") }
            let settings = GuardSettings(rateLimit: rateLimit, replayWindowMilliseconds: replayWindowMs)
            try await connection.store().putGuardSettings(settings, tenant: try AdminCommand.identifier(tenant, "tenant"))
            print(
                "guards of tenant \(tenant): rate limit \(rateLimit.map { "\($0) per account per window" } ?? "off"), replay window \(replayWindowMs > 0 ? "\(replayWindowMs) ms" : "off")"
            )
        }
    }
}
