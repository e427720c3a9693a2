import ArgumentParser
import KSMService
import Licensing
import RedisStore

/// `ksm admin put-packager-credential` and `remove-packager-credential`: the bearer tokens a
/// packager presents to `ksm speke` (docs/redis.md, "Packager credentials"). Only the token's
/// SHA-256 is stored; the token is printed once, as the last line of output, so a script can take
/// it with `tail -n 1`.
extension AdminCommand {
    struct PutPackagerCredential: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "put-packager-credential",
            abstract:
                "Create a packager credential for a tenant: prints a new bearer token once, as the last line (only its hash is stored)."
        )
        @OptionGroup var connection: Connection
        @Option(help: "Tenant ID.") var tenant: String
        @Option(help: "Credential ID (the HTTP Basic user name). Default: pk- and 12 random hex digits. An existing ID is replaced.")
        var id: String?

        func run() async throws {
            let tenantID = try AdminCommand.identifier(tenant, "tenant")
            let credentialID = try id.map { try AdminCommand.identifier($0, "id") } ?? PackagerToken.generateID()
            let token = PackagerToken.generate()
            let credential = PackagerCredential(
                id: credentialID, tokenHash: PackagerToken.hash(Array(token.utf8)), createdAtMilliseconds: LicenseProcessor.currentTimeMilliseconds())
            try await connection.store().putPackagerCredential(credential, tenant: tenantID)
            print("packager credential \(credentialID) of tenant \(tenant); the token below is shown only now.")
            print("Send it as 'Authorization: Bearer <token>', or HTTP Basic with user \(credentialID) and the token as password.")
            print(token)
        }
    }

    struct RemovePackagerCredential: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove-packager-credential",
            abstract: "Revoke one packager credential of a tenant, or all of them when --id is omitted.")
        @OptionGroup var connection: Connection
        @Option(help: "Tenant ID.") var tenant: String
        @Option(help: "Credential ID to revoke. Default: every credential of the tenant.") var id: String?

        func run() async throws {
            let tenantID = try AdminCommand.identifier(tenant, "tenant")
            let credentialID = try id.map { try AdminCommand.identifier($0, "id") }
            let removed = try await connection.store().removePackagerCredentials(tenant: tenantID, id: credentialID)
            if let credentialID, removed == 0 {
                throw CommandFailure.runtime("tenant \(tenant) has no packager credential \(credentialID)")
            }
            print("revoked \(removed) packager credential\(removed == 1 ? "" : "s") of tenant \(tenant)")
        }
    }
}
