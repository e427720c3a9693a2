import Foundation

extension ServeOptions {
    /// `host-pid`: unique per running worker when no static-membership instance ID names it.
    static func defaultInstanceID() -> String {
        let host = ProcessInfo.processInfo.hostName
        return "\(host)-\(getpid())"
    }
}
