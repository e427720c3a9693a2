import KSMService
import ServiceLifecycle

/// A periodic check (a Redis PING, the provisioning marker, the lease-slot count) as a `Service` of
/// the worker process's `ServiceGroup`: it runs until the group shuts down, gracefully or by
/// cancellation, so no check outlives the process's services or is left running when one fails.
package struct MonitorService: Service, CustomStringConvertible {
    /// Names the check in the group's logs.
    package let description: String
    /// Loops until its task is cancelled (``StoreHealth/monitor(every:_:)``, `LeaseSlotGauge.monitor`).
    let body: @Sendable () async -> Void

    package init(_ description: String, _ body: @escaping @Sendable () async -> Void) {
        self.description = description
        self.body = body
    }

    package func run() async {
        // A check has nothing to drain: graceful shutdown cancels it.
        await cancelWhenGracefulShutdown(body)
    }
}
