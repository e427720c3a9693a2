import ArgumentParser
import Foundation
import KSMLoad
import KSMOperations
import KSMService

/// The one executable of FairPlayKSM.
///
/// `main` tells a malformed command line (usage text, status 64) from a failure at run time (one
/// sentence, no usage text: status 64 for a value or a named file the operator must fix, a
/// `ValidationError` or an `OperatorFixableError` (secret and key files, test fixtures); 1 for anything else, e.g. a service that cannot be
/// reached), for every subcommand alike (`CommandFailure`).
@main
struct KSM: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ksm",
        abstract: "FairPlay Streaming key server: one-shot tools and the worker fleet.",
        version: KSMVersion.current,
        subcommands: [
            DemoCommand.self, ServeCommand.self, LoadgenCommand.self, BrokerCommand.self, AdminCommand.self, ProcessCommand.self, InspectCommand.self,
            BenchCommand.self, SpekeCommand.self, EdgeCommand.self,
        ]
    )

    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        var command: any ParsableCommand
        do {
            command = try parseAsRoot(arguments)
        } catch {
            exit(withError: error)
        }
        do {
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
        } catch let exit as ExitCode {
            Self.exit(withError: exit)
        } catch  where Self.exitCode(for: error).isSuccess {
            // The parser's own signals from `run` (a help or version request, `CleanExit`): it prints them.
            Self.exit(withError: error)
        } catch {
            let name = arguments.first { !$0.hasPrefix("-") } ?? "ksm"
            let failure: CommandFailure =
                (error as? CommandFailure)
                ?? (error is ValidationError || error is any OperatorFixableError
                    ? .configuration([CommandFailure.sentence(for: error)]) : .runtime(CommandFailure.sentence(for: error)))
            Self.exit(withError: failure.report(command: name))
        }
    }
}
