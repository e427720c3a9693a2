import FairPlay
import KSMService
import NIOCore
import OwnedThreads

/// The worker's capacity and scheduling, and the credentials it answers with.
extension ServeConfigurationResolver {
    mutating func resolveWorker(_ configuration: inout ServeConfiguration) {
        configuration.worker.maximumBatchSize = integer(.maxBatchSize) ?? configuration.worker.maximumBatchSize
        configuration.worker.maximumInFlight = integer(.maxInFlight) ?? configuration.worker.maximumInFlight
        configuration.worker.maximumRequestBytes = integer(.maxRequestBytes) ?? configuration.worker.maximumRequestBytes
        configuration.worker.shutdownTimeout = duration(.shutdownTimeout)
        // NIO's count reads a container's CPU quota (cgroup v1 and v2) and cpuset, so a pod limited to
        // 2 CPUs runs 2 crypto threads on any node; the affinity mask caps it too, so a worker started
        // under `taskset -c 0-3` runs 4 (ServeConfigurationCommandTests checks both).
        let cores = CPUAffinity.usableCores(NIOCore.System.coreCount)
        configuration.cryptoThreads = integer(.cryptoThreads, default: cores) ?? cores
        // Four batches per crypto thread keep the pool fed while other batches wait on Redis or a
        // delivery report (docs/performance.md §3: at four in all, two threads idled 8-10% of a storm).
        let batchesPerPool = WorkerConfiguration.concurrentBatches(forCryptoThreads: configuration.cryptoThreads)
        configuration.worker.concurrentBatches = integer(.concurrentBatches, default: batchesPerPool) ?? batchesPerPool
        resolveScheduling(&configuration.worker.scheduling)
    }

    private mutating func resolveScheduling(_ scheduling: inout SchedulingPolicy) {
        scheduling.enabled = boolean(.scheduling)
        scheduling.tenantWeights = map(.tenantWeights).compactMapValues { Double($0) }
        scheduling.prefetchMaximumWait = duration(.prefetchMaxWait)
        scheduling.newSessionMaximumWait = duration(.newSessionMaxWait)
        scheduling.newSessionShare = number(.newSessionShare)
        scheduling.prefetchShare = number(.prefetchShare)
        if scheduling.newSessionShare + scheduling.prefetchShare > 0.5 {
            let location = sources.source(of: .newSessionShare) ?? sources.source(of: .prefetchShare) ?? ServeSetting.newSessionShare.key
            problem(
                .outOfRange, location,
                "new-session-share \(scheduling.newSessionShare) and prefetch-share \(scheduling.prefetchShare) add up to more than 0.5 of a batch: continuity must keep at least half; lower one of them."
            )
        }
    }

    mutating func resolveCredentials(_ configuration: inout ServeConfiguration) {
        configuration.fpscryptoLibrary = string(.fpscryptoLibrary)
        let generation = choice(.fpscryptoGeneration)
        configuration.fpscryptoGeneration = FPSCryptoLibrary.Generation(name: generation) ?? configuration.fpscryptoGeneration
        configuration.keyEncryptionKeyFiles = map(.kek)
        if let versions = integers(.protocolVersions) { configuration.protocolVersions = versions.compactMap { UInt32(exactly: $0) } }
    }
}
