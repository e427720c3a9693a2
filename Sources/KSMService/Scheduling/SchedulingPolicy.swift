import Wire

/// How a worker orders and sheds queued jobs (docs/scheduling.md).
public struct SchedulingPolicy: Sendable, Hashable {
    /// Priority classes, tenant fairness and deadline order. Off: first in, first out, nothing shed
    /// (the comparison baseline of `ksm bench storm`).
    public var enabled = true
    /// Relative shares of the worker between tenants inside a class; unnamed tenants weigh 1.
    public var tenantWeights: [String: Double] = [:]
    /// A prefetch job that would wait longer than this is shed at once with a retry-after hint.
    public var prefetchMaximumWait: Duration = .seconds(1)
    /// A new-session job that would wait longer than this (or past its own deadline) is shed at once
    /// with a retry-after hint. Default 30 s, about when a player gives up: a storm is transient and
    /// drains faster when new sessions wait than when they come back. Continuity jobs (viewers
    /// already playing) are never shed; only their deadline ends them.
    public var newSessionMaximumWait: Duration = .seconds(30)
    /// The least share of every batch that goes to queued new sessions while continuity has a
    /// backlog, so a continuity storm that outlasts the worker never starves joins: 0.125 is 8 of a
    /// 64-job batch. Kept as credit across batches, so a share below one job per batch still holds.
    public var newSessionShare = 0.125
    /// The same floor for prefetch (served, or shed with a retry-after, never left waiting for good).
    public var prefetchShare = 1.0 / 64
    /// The service rate assumed before the worker measured a batch, in jobs per second. Nil (the
    /// default): nothing is shed until one was measured (``ServiceRate``).
    public var initialRate: Double?

    /// The default policy: scheduling on, with the defaults documented on each property.
    public init() {}

    /// The weight of `tenant` (positive): the entry with the tenant's exact bytes, not one merely
    /// canonically equivalent (a `String` key lookup would match that one too).
    func weight(_ tenant: ByteKey) -> Double {
        max(tenantWeights.first { $0.key.utf8.elementsEqual(tenant.bytes) }?.value ?? 1, 0.001)
    }
}
