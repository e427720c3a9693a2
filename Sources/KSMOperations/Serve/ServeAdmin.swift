import KSMService
import Logging
import Prometheus

/// What the admin port shows of a worker process: `/healthz` from the worker's loop, `/readyz`
/// from its partitions and the store monitors, `/metrics` from the worker, the cache, the lease
/// slots and rotation, and `/status`.
struct ServeAdmin: Sendable {
    let worker: LicenseWorker
    let stores: ServeStores
    let monitors: ServeMonitors
    let rotation: RotationStatus
    let registry: PrometheusCollectorRegistry

    func server(port: Int, logger: Logger) -> AdminServer {
        let metrics = WorkerMetrics(version: KSMVersion.current) { [self] in
            var inputs = WorkerMetrics.Inputs(
                statistics: worker.statistics.snapshot, storeUp: monitors.storeHealth.isUp, storeProvisioned: monitors.provisioning.isUp,
                stalled: worker.isStalled, lag: worker.consumerLag, cache: stores.cache?.statistics, slots: monitors.slots.sample,
                rotation: rotation.snapshot,
                process: ProcessSample.read())
            inputs.lagByClass = worker.consumerLagByClass
            return inputs
        }
        return AdminServer(
            port: port,
            health: { [worker] in worker.isStalled ? .init(ok: false, detail: "processing loop stalled") : .init(ok: true, detail: "ok") },
            readiness: { [self] in readiness() },
            metrics: { [registry] in
                metrics.publish()
                return registry.emitToString()
            },
            status: { [self] in
                let s = worker.statistics.snapshot
                return WorkerStatus(
                    ready: readiness().ok, stalled: worker.isStalled, assignedPartitions: s.assignedPartitions,
                    partitionChanges: s.partitionChanges, received: s.received, replied: s.replied)
            },
            logger: logger)
    }

    func readiness() -> AdminServer.Probe {
        let owned = worker.statistics.snapshot.assignedPartitions
        if owned == 0 { return .init(ok: false, detail: "no partition assigned") }
        if !monitors.storeHealth.isUp { return .init(ok: false, detail: "redis: \(monitors.storeHealth.detail)") }
        if !monitors.provisioning.isUp { return .init(ok: false, detail: "redis: \(monitors.provisioning.detail)") }
        return .init(ok: true, detail: "ok: \(owned) partitions, redis up")
    }
}
