import Foundation
import KSMLoad

extension RunningProcess {
    /// The `ksm` built beside the test bundle, run from the package root.
    convenience init(_ name: String, _ arguments: [String], environment: [String: String] = [:], controlInput: Bool = false) throws {
        try self.init(name, executable: KSMBinary.url, arguments, environment: environment, currentDirectory: KSMBinary.packageRoot, controlInput: controlInput)
    }
}
