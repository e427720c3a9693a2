/// The device limit per account, like a PlayReady domain: an account may register up to N devices
/// (FairPlay HUs); a registered device always passes, a new one only while there is room.
/// Pure: the registered set comes from the store, and the worker records a ``DeviceLimitDecision/register``.
package enum DeviceLimit {
    package static func decide(device: [UInt8], registered: Set<[UInt8]>, limit: PolicyLimit) -> DeviceLimitDecision {
        if registered.contains(device) { return .alreadyRegistered }
        if limit.isFull(with: registered.count) {
            return .refused(registered: registered.count, limit: limit)
        }
        return .register
    }
}

/// The outcome of ``DeviceLimit/decide(device:registered:limit:)``.
package enum DeviceLimitDecision: Hashable, Sendable {
    /// The device is already one of the account's; nothing to record.
    case alreadyRegistered
    /// There is room: record the device, then issue.
    case register
    /// The account holds `registered` devices of `limit`.
    case refused(registered: Int, limit: PolicyLimit)

    /// Nil unless refused.
    package var refusal: PolicyRefusal? {
        if case .refused = self { return .deviceLimitReached }
        return nil
    }

    /// For the reply's reason.
    package var reason: String {
        switch self {
        case .alreadyRegistered: "device already registered"
        case .register: "device registered"
        case .refused(let n, let limit): "the account has registered \(n) of \(limit) devices"
        }
    }
}
