import ArgumentParser
import KSMService

/// The one executable of FairPlayKSM.
@main
struct KSM: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ksm",
        abstract: "FairPlay Streaming key server: one-shot tools and the worker fleet.",
        version: KSMVersion.current,
        subcommands: [DemoCommand.self, ServeCommand.self, LoadgenCommand.self, BrokerCommand.self, AdminCommand.self, ProcessCommand.self, InspectCommand.self, BenchCommand.self]
    )
}
