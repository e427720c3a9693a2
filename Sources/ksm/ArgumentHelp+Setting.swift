import ArgumentParser
import KSMOperations
import KSMService

extension ArgumentHelp {
    /// Help for a `ksm serve` flag that ends with the environment variable of its setting, taken
    /// from ``ServeSetting/all``, so `--help` and the resolver cannot name different variables.
    static func setting(_ key: String, _ text: String) -> ArgumentHelp {
        guard let setting = ServeSetting.byKey[key], let variable = setting.environment else {
            preconditionFailure("ksm serve has no setting \(key)")
        }
        switch setting.kind {
        case .boolean where key == "scheduling" || key == "guards":
            return ArgumentHelp("\(text) Environment: \(variable)=false.")
        case .map, .integerList, .stringList:
            return ArgumentHelp("\(text) Environment: \(variable), comma-separated.")
        default:
            return ArgumentHelp("\(text) Environment: \(variable).")
        }
    }
}
