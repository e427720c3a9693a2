/// The reply's `next-key` field: when the key the viewer plays now gives way to the next one, and
/// when this viewer should ask for that next key (schemas/license-reply.schema.json).
///
/// The fetch time lies in the worker's prefetch window before the boundary, placed per viewer, so a
/// rotation's audience asks spread over the window instead of within a second of the boundary.
package struct NextKeyAdvice: Sendable, Hashable {
    /// When the next key period starts, in milliseconds since 1970.
    package var boundaryMilliseconds: Int64
    /// When to ask for the next key (at priority `prefetch`), in milliseconds since 1970.
    package var fetchAtMilliseconds: Int64

    package init(boundaryMilliseconds: Int64, fetchAtMilliseconds: Int64) {
        self.boundaryMilliseconds = boundaryMilliseconds
        self.fetchAtMilliseconds = fetchAtMilliseconds
    }
}
