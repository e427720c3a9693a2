import KSMService

extension StringProtocol {
    /// Without leading and trailing spaces, tabs and newlines (no Foundation needed).
    var trimmingWhiteSpace: String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
