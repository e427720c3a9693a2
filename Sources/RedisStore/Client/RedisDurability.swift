/// How many replicas must have a pipeline's writes before it is answered: `WAIT replicas timeout`
/// sent after the pipeline on the connection that wrote it (each master's, on a cluster).
///
/// Redis replicates asynchronously; without this a write acknowledged by a master that dies before
/// its replica got it is lost at the failover (docs/redis.md, "Durability across a failover").
public struct RedisDurability: Sendable, Hashable {
    /// Replicas that must acknowledge; at least 1.
    package var replicas: Int
    /// How long `WAIT` may block; fewer acknowledgements by then fail the pipeline (`.notDurable`).
    package var timeout: Duration

    package init(replicas: Int, timeout: Duration) {
        self.replicas = replicas
        self.timeout = timeout
    }

    /// The timeout in whole milliseconds for `WAIT`, at least 1 (`WAIT n 0` would block for ever).
    var timeoutMilliseconds: Int64 {
        let (seconds, attoseconds) = timeout.components
        return max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }
}
