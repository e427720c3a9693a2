import Licensing
import Wire

/// The device registry of an account, for operators: the devices counted against a policy's
/// `max-devices` (registered by the lease script the first time a device gets a license under a
/// device limit). Customer support removes a lost or sold device so another can take its place.
extension RedisLicenseStore {
    /// The account's registered device HUs, sorted by their hex form; empty for an unknown account.
    package func registeredDevices(tenant: StoreIdentifier, account: StoreIdentifier) async throws(LicenseStoreError) -> [[UInt8]] {
        let reply = try await run([RedisCommand(["SMEMBERS", RedisKeys.devices(tenant, account: account)])])[0]
        guard let members = try Self.checked(reply).arrayValue else {
            throw LicenseStoreError(.corruptRecord, "device registry of \(tenant)/\(account) is not a set")
        }
        var devices: [(hex: String, bytes: [UInt8])] = []
        for member in members {
            guard let hex = member.string, let bytes = HexEncoding.decode(hex), !bytes.isEmpty else {
                throw LicenseStoreError(.corruptRecord, "device registry of \(tenant)/\(account) holds a member that is not hex")
            }
            devices.append((hex, bytes))
        }
        return devices.sorted { $0.hex < $1.hex }.map(\.bytes)
    }

    /// Removes one device from the account's registry, which frees its place under the device
    /// limit at once. Its live lease slots are left to expire (or to be renewed, which registers the
    /// device again if the limit allows). Returns false when the device was not registered.
    package func removeDevice(tenant: StoreIdentifier, account: StoreIdentifier, deviceID: [UInt8]) async throws(LicenseStoreError) -> Bool {
        let reply = try await run([RedisCommand(["SREM", RedisKeys.devices(tenant, account: account), RedisArgument(HexEncoding.encode(deviceID))])])[0]
        guard let removed = try Self.checked(reply).integerValue else {
            throw LicenseStoreError(.corruptRecord, "SREM on the device registry of \(tenant)/\(account) did not answer a count")
        }
        return removed == 1
    }
}
