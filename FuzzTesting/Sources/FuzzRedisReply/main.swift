import Licensing

@testable import RedisStore

/// libFuzzer entry for what a Redis server answers: the input is a byte stream from the server,
/// read by hiredis's reader and copied into `RedisValue`s (``HiredisReader``, the same parser and
/// copy as every reply on a connection), and each reply goes to every reader of replies: the
/// cluster slot map from `CLUSTER SHARDS` and `CLUSTER SLOTS`, the `MOVED`/`ASK` parser, the lease
/// scripts' reply text, stored answers, slot members, and the store's hash, guard-settings and
/// rotation-schedule decoders. Thrown errors are expected; a crash, trap, sanitizer report, hang
/// or an accepted value that breaks its invariants is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRedisReply(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let replies = try? HiredisReader.replies(in: bytes) else { return 0 }
    for reply in replies { readEverything(reply, levels: 2) }
    return 0
}

private let tenant: StoreIdentifier = {
    do { return try StoreIdentifier("acme") } catch { fatalError("a valid identifier") }
}()

private func require(_ condition: Bool, _ what: @autoclosure () -> String) {
    if !condition { fatalError(what()) }
}

private func readEverything(_ value: RedisValue, levels: Int) {
    if levels == 2, value.arrayValue != nil {
        for map in [try? ClusterSlotMap(shards: value), try? ClusterSlotMap(slots: value)] {
            guard let map else { continue }
            require(map.masters.count <= HashSlot.count + 1, "\(map.masters.count) masters")
            require(map.masters.allSatisfy { (1...65535).contains($0.port) && RedisNodeAddress.isValidHost($0.host) }, "a master without a valid address")
            for slot in 0..<HashSlot.count { _ = map.master(for: slot) }
        }
    }
    if let redirect = try? ClusterRedirect.parse(value) {
        switch redirect.kind {
        case .moved(let slot, let node), .ask(let slot, let node):
            require((0..<HashSlot.count).contains(slot) && (1...65535).contains(node.port) && RedisNodeAddress.isValidHost(node.host), redirect.message)
        case .tryAgain, .clusterDown:
            break
        }
    }
    if let text = value.string, let lease = LeaseResult(encoded: text) {
        require(LeaseResult(encoded: lease.encoded) == lease, "a lease reply does not survive its own encoding")
    }
    if let bytes = value.bytes {
        let answer = StoredAnswer(redisValue: bytes)
        require(StoredAnswer(redisValue: answer.redisValue) == answer, "a stored answer does not survive its own encoding")
        if let member = value.string { _ = LeaseSlot(member: member, expiresAtMilliseconds: 1) }
    }
    guard let flat = value.arrayValue else { return }
    _ = try? RedisLicenseStore.decodeHash(value)
    _ = try? RedisLicenseStore.decodeGuardSettings(tenant, value)
    if flat.count.isMultiple(of: 2) {
        var fields: [String: String] = [:]
        for pair in stride(from: 0, to: flat.count, by: 2) {
            if let name = flat[pair].string, let text = flat[pair + 1].string { fields[name] = text }
        }
        if let schedule = try? RotationSchedule(tenant: tenant, assetID: [1], fields: fields) {
            require((1...64).contains(schedule.keysPerViewer) && schedule.boundaryMilliseconds >= 0, "a rotation schedule out of range")
        }
    }
    if levels > 0 {
        for element in flat { readEverything(element, levels: levels - 1) }
    }
}
