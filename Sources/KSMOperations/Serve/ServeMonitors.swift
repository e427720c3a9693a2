import KSMService
import Licensing
import RedisStore
import ServiceLifecycle

/// The store checks `/readyz` and `/metrics` read: Redis answering PING on every master, the
/// provisioning marker, and the lease slots in use. Each runs as a ``MonitorService``.
struct ServeMonitors: Sendable {
    let stores: ServeStores
    let statistics: WorkerStatistics
    let storeHealth = StoreHealth()
    /// The provisioning marker, checked beside PING: a Redis that restarted empty answers PING.
    let provisioning = StoreHealth()
    let slots = LeaseSlotGauge()

    /// The checks as services; the slot count only with `slotCountInterval` (an admin port: nobody
    /// reads the gauge otherwise).
    func services(slotCountInterval: Duration?) -> [any Service] {
        let redis = stores.redis
        let redisStore = stores.redisStore
        let statistics = statistics
        var services: [any Service] = [
            MonitorService("RedisPing") { [storeHealth] in
                await storeHealth.monitor {
                    do {
                        // Every master of a cluster: a job may need any of them.
                        for node in try await redis.masterClients() { _ = try await node.send(["PING"]) }
                        return nil
                    } catch {
                        statistics.storeError(operation: "ping", code: (error as? RedisError).map { "\($0.code)" } ?? "other")
                        return "\(error)"
                    }
                }
            },
            MonitorService("ProvisioningMarker") { [provisioning] in
                // One EXISTS while marked; a store provisioned before the marker existed gets it here
                // (a tenant record proves provisioning; a store that lost its data holds none).
                await provisioning.monitor(every: .seconds(5)) {
                    do {
                        if try await redisStore.markProvisionedIfTenantsExist() { return nil }
                        return "no provisioning marker: Redis lost its data or was never provisioned (docs/redis.md)"
                    } catch {
                        return "provisioning check failed: \((error as? LicenseStoreError)?.message ?? "\(error)")"
                    }
                }
            },
        ]
        if let slotCountInterval {
            services.append(
                MonitorService("LeaseSlotCount") { [slots] in
                    await slots.monitor(client: redis, every: slotCountInterval) { error in
                        statistics.storeError(operation: "slot_count", code: "\(error.code)")
                    }
                })
        }
        return services
    }
}
