import ArgumentParser
import FairPlay
import Foundation
import KSMLoad
import KSMService
import Licensing
import Logging
import RedisStore
import Wire

/// `ksm admin`: loads tenants, credential references, wrapped keys and policies into Redis, and lists slots.
struct AdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin",
        abstract: "Manage what workers read from Redis: tenants, content keys, policies, lease slots.",
        subcommands: [
            SeedDemo.self, PutTenant.self, PutKey.self, PutPolicy.self, PutGuard.self, Slots.self, Devices.self, RemoveDevice.self,
            Explain.self, PutRotation.self, Rotations.self, RemoveRotation.self, DeriveKey.self, CreateTopics.self,
            PutPackagerCredential.self, RemovePackagerCredential.self, ExportCPIX.self, ImportCPIX.self, PutCertificate.self,
        ]
    )

    /// Connection options shared by every admin subcommand.
    struct Connection: ParsableArguments {
        @Option(help: "redis://[user:pass@]host:port/db, or redis-cluster://[user:pass@]host:port,host:port (env KSM_REDIS_URL).")
        var redisURL: String?

        func store() throws -> RedisLicenseStore {
            guard let url = redisURL ?? ProcessInfo.processInfo.environment["KSM_REDIS_URL"] else {
                throw ValidationError("no Redis: pass --redis-url or set KSM_REDIS_URL")
            }
            do {
                return RedisLicenseStore(client: try RedisEndpoint(url: url).makeClient())
            } catch {
                throw ValidationError("redis: \(error)")
            }
        }
    }

    static func identifier(_ value: String, _ what: String) throws -> StoreIdentifier {
        do { return try StoreIdentifier(value) } catch { throw ValidationError("\(what): \(error)") }
    }

    struct SeedDemo: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "seed-demo",
            abstract:
                "Write the demo catalogue (tenant, policy, every stream's key periods, the certificates ksm edge serves) for `ksm loadgen`; prints the demo KEK path to use with `ksm serve --kek`."
        )
        @OptionGroup var connection: Connection
        @OptionGroup var scenario: ScenarioOptions
        @Option(help: "Where to write the demo key-encryption key (hex, mode 600).")
        var kekOut = "demo-kek.hex"
        @Option(help: "Concurrent streams per account.")
        var maxStreams = 2
        @Option(help: "Lease seconds.")
        var leaseDuration: UInt32 = 300

        func run() async throws {
            let test = try TestCredentials(directory: scenario.fixtures)
            var catalog = scenario.catalog
            catalog.maxConcurrentStreams = maxStreams
            catalog.leaseDurationSeconds = leaseDuration
            let store = try connection.store()
            try await catalog.provision(store, credentials: test)
            // The edge serves the tenant's certificates; the first credential's is the default.
            for credential in test.credentials.reversed() {
                _ = try await PutCertificate.store(credential.certificateDER, tenant: try AdminCommand.identifier(catalog.tenant, "tenant"), in: store)
            }
            guard
                FileManager.default.createFile(
                    atPath: kekOut, contents: Data((catalog.demoKeyEncryptionKey.hexString + "\n").utf8), attributes: [.posixPermissions: 0o600])
            else {
                throw CommandFailure.runtime("cannot write the KEK file \(kekOut) (--kek-out): check that its directory exists and is writable")
            }
            print("seeded tenant \(catalog.tenant): \(catalog.streams) streams x \(catalog.periods) periods; KEK \(catalog.keyEncryptionKeyID) in \(kekOut)")
        }
    }

    struct PutTenant: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "put-tenant", abstract: "Create or replace a tenant.")
        @OptionGroup var connection: Connection
        @Option(help: "Tenant ID.") var tenant: String
        @Option(help: "Credentials file whose certificates this tenant owns.") var credentials: String?
        @Option(help: "SHA-1 certificate hash (hex) the tenant owns; repeatable.") var certificateHash: [String] = []
        @Option(help: "ID of the key-encryption key its content keys are wrapped under.") var kekId: String
        @Option(help: "Concurrent streams per account.") var maxStreams = 2
        @Option(help: "Kept for older records; leases now come from the policy's lease.duration.") var leaseDuration: UInt32 = 600
        @Option(help: "Entitlement token secret as KID=PATH (hex or raw, 32+ bytes, a multiple of 8); repeatable. Stored wrapped under the tenant's KEK.")
        var tokenSecret: [String] = []
        @Option(help: "The tenant's KEK as ID=PATH, to wrap --token-secret and --key-seed (its ID must be --kek-id).") var kek: String?
        @Option(
            help:
                "Content key seed file (32 bytes, hex or raw, mode 600): assets with no stored key get keys derived from it (docs/key-seeds.md). Stored wrapped under the tenant's KEK."
        )
        var keySeed: String?

        func run() async throws {
            var provisioning = TenantProvisioning(tenant: tenant, keyEncryptionKeyID: kekId)
            provisioning.credentialsFiles = credentials.map { [$0] } ?? []
            provisioning.certificateHashes = certificateHash
            provisioning.keyEncryptionKeyFile = kek
            provisioning.maxConcurrentStreams = maxStreams
            provisioning.leaseDurationSeconds = leaseDuration
            provisioning.tokenSecrets = tokenSecret
            provisioning.keySeedFile = keySeed
            let record: TenantRecord
            do { record = try provisioning.record() } catch { throw ValidationError(error.description) }
            try await connection.store().putTenant(record)
            let kids = record.entitlementSecrets.keys.map(\.value).sorted().joined(separator: ", ")
            print(
                "tenant \(tenant): \(record.certificateHashes.count) certificate(s), KEK \(kekId), \(maxStreams) streams by default, token keys [\(kids)]\(record.keySeed == nil ? "" : ", key seed")"
            )
        }
    }

    struct PutKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "put-key", abstract: "Wrap a content key under a KEK and store it for an asset (and key period).")
        @OptionGroup var connection: Connection
        @Option(help: "Tenant ID.") var tenant: String
        @Option(help: "Asset ID as the SPC carries it (e.g. skd://...).") var asset: String
        @Option(help: "Key period (live key rotation); omit for a single key.") var period: String?
        @Option(help: "Content key, 16 bytes hex.") var key: String
        @Option(help: "Content IV, 16 bytes hex.") var iv: String
        @Option(help: "KEK as ID=PATH.") var kek: String

        func run() async throws {
            guard let contentKey = [UInt8](hexString: key), contentKey.count == 16 else { throw ValidationError("--key must be 16 bytes of hex") }
            guard let contentIV = [UInt8](hexString: iv), contentIV.count == 16 else { throw ValidationError("--iv must be 16 bytes of hex") }
            let (keyring, kekID) = try KeyFile.keyring(idAndPath: kek)
            let wrapped = try keyring.wrap(contentKey: contentKey, iv: contentIV, with: kekID)
            try await connection.store().putContentKey(
                wrapped, tenant: try AdminCommand.identifier(tenant, "tenant"), assetID: Array(asset.utf8),
                keyPeriod: try period.map { try AdminCommand.identifier($0, "period") })
            print("key stored for \(asset)\(period.map { " period \($0)" } ?? "") under KEK \(kekID)")
        }
    }

    struct PutPolicy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "put-policy", abstract: "Store a policy document (schemas/policy.schema.json) for a tenant or one asset.")
        @OptionGroup var connection: Connection
        @Option(help: "Tenant ID.") var tenant: String
        @Option(help: "Asset ID; omit for the tenant default.") var asset: String?
        @Argument(help: "Policy JSON file, or - for standard input.") var policy: String

        func run() async throws {
            let bytes = try CommandSupport.read(policy)
            do { _ = try PolicyDocument(json: bytes) } catch { throw ValidationError("policy: \(error)") }
            try await connection.store().putPolicy(bytes, tenant: try AdminCommand.identifier(tenant, "tenant"), assetID: asset.map { Array($0.utf8) })
            print("policy stored for \(asset ?? "tenant \(tenant) default")")
        }
    }

    struct Explain: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "explain",
            abstract: "Judge a license job against the stored policy and print the decision; issues nothing, takes no slot, writes nothing.")
        @OptionGroup var connection: Connection
        @Option(help: "Credentials file (as for `ksm serve`), to open the job's SPC.") var credentials: String
        @Option(help: "Key-encryption key ID=PATH, to unwrap the tenant's token secrets; repeatable.") var kek: [String] = []
        @Option(help: "Clock in ms since 1970 (default: now), to ask what a job would get at another time.") var now: Int64?
        @Argument(help: "License job JSON file (schemas/license-job.schema.json), or - for standard input.") var job: String

        func run() async throws {
            let decoded: LicenseJob
            do { decoded = try LicenseJob(json: try CommandSupport.read(job)) } catch { throw ValidationError("\(error)") }
            var files: [String: String] = [:]
            for pair in kek {
                let (id, path) = try KeyFile.idAndValue(pair, option: "--kek")
                files[id] = path
            }
            let keyring = try KeyFile.keyring(files: files)
            let server = try CommandSupport.server(credentials: credentials, library: nil, versions: [1])
            let processor = LicenseProcessor(
                keyServer: server, store: try connection.store(), keyring: keyring, pool: CryptoPool(threadCount: 1),
                logger: Logger(label: "ksm.explain"))
            let explanation = await processor.explain(decoded, now: now ?? LicenseProcessor.currentTimeMilliseconds())
            FileHandle.standardOutput.write(Data(explanation.jsonValue.encoded() + Array("\n".utf8)))
        }
    }

    struct Slots: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "slots", abstract: "List an account's live lease slots.")
        @OptionGroup var connection: Connection
        @Option(help: "Tenant ID.") var tenant: String
        @Option(help: "Account ID.") var account: String

        func run() async throws {
            let now = LicenseProcessor.currentTimeMilliseconds()
            let slots = try await connection.store().listSlots(
                tenant: try AdminCommand.identifier(tenant, "tenant"), account: try AdminCommand.identifier(account, "account"), nowMilliseconds: now)
            let rows: [JSONValue] = slots.map {
                .object([
                    "device": .string($0.deviceID.hexString), "stream": .string(LeaseSlot.member(deviceID: $0.deviceID, sessionID: $0.sessionID)),
                    "expires-at": .integer($0.expiresAtMilliseconds),
                    "seconds-left": .integer(($0.expiresAtMilliseconds - now) / 1000),
                ])
            }
            CommandSupport.printJSON(.object(["tenant": .string(tenant), "account": .string(account), "slots": .array(rows)]))
        }
    }
}
