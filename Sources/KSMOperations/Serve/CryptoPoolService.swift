import KSMService
import ServiceLifecycle

/// Holds the crypto pool's threads for the worker process's `ServiceGroup` and hands them back when
/// the group shuts down, on every path: a graceful shutdown, a cancellation, or another service's
/// failure. Placed before the worker in the group, it shuts down after the worker has drained.
package struct CryptoPoolService: Service, CustomStringConvertible {
    package let pool: CryptoPool

    package init(pool: CryptoPool) { self.pool = pool }

    package var description: String { "CryptoPool" }

    package func run() async {
        // Throws on cancellation, which ends the wait all the same; work submitted after the
        // shutdown runs on the caller's thread, so a batch still in flight is never dropped.
        try? await gracefulShutdown()
        pool.shutdown()
    }
}
