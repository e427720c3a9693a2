import ArgumentParser
import Foundation
import Licensing
import RedisStore
import Wire

extension AdminCommand {
    /// `ksm admin devices`: the devices an account has registered under a device limit.
    struct Devices: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "devices", abstract: "List the devices (HU, hex) an account has registered under a policy's device limit.")
        @OptionGroup var connection: AdminCommand.Connection
        @Option(help: "Tenant ID.") var tenant: String
        @Option(help: "Account ID.") var account: String

        func run() async throws {
            let devices = try await connection.store().registeredDevices(
                tenant: try AdminCommand.identifier(tenant, "tenant"), account: try AdminCommand.identifier(account, "account"))
            CommandSupport.printJSON(
                .object([
                    "tenant": .string(tenant), "account": .string(account), "devices": .array(devices.map { .string(HexEncoding.encode($0)) }),
                ]))
        }
    }

    /// `ksm admin remove-device`: frees a device's place under the account's device limit.
    struct RemoveDevice: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove-device",
            abstract: "Remove a device from an account's registry, freeing its place under the device limit (its live leases run out).")
        @OptionGroup var connection: AdminCommand.Connection
        @Option(help: "Tenant ID.") var tenant: String
        @Option(help: "Account ID.") var account: String
        @Option(help: "The device's HU in hex, as `ksm admin devices` and replies (`hu`) show it.") var device: String

        func run() async throws {
            guard let deviceID = HexEncoding.decode(device), !deviceID.isEmpty else {
                throw ValidationError("device: '\(device)' is not hex (as `ksm admin devices` prints it)")
            }
            let removed = try await connection.store().removeDevice(
                tenant: try AdminCommand.identifier(tenant, "tenant"), account: try AdminCommand.identifier(account, "account"), deviceID: deviceID)
            guard removed else {
                throw ValidationError("device \(device.lowercased()) is not registered for \(tenant)/\(account)")
            }
            print("removed device \(device.lowercased()) from \(tenant)/\(account)")
        }
    }
}
