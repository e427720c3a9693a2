/// Moves the last reference of a C-handle owner into a one-shot thread, so that dropping it (and so
/// `rd_kafka_destroy`) happens there, before the awaiting caller resumes.
final class LastReference<T: AnyObject>: @unchecked Sendable {
    // @unchecked: `value` is only touched by the one thread that `drop()`s it.
    private var value: T?

    init(_ value: T) {
        self.value = value
    }

    func withValue<R>(_ body: (T) -> R) -> R {
        guard let value else { preconditionFailure("LastReference used after drop()") }
        return body(value)
    }

    func drop() {
        value = nil
    }
}
