/// What happens when an account that already holds its maximum of concurrent streams starts one more.
///
/// JSON: `"refuse-new"` or `"end-oldest"`.
package enum WhenFull: String, Hashable, Sendable, CaseIterable {
    /// The new stream is refused; the running ones keep playing. The safe default.
    case refuseNew = "refuse-new"
    /// The new stream is admitted and the oldest one is ended: its next lease renewal is refused, so
    /// it stops when its current lease runs out (a device cannot be stopped sooner; the guide's
    /// secure lease is the only lever).
    case endOldest = "end-oldest"
}
