extension Duration {
    /// The duration in seconds as a Double (settings, rates and reports are in seconds).
    package var seconds: Double {
        let (s, atto) = components
        return Double(s) + Double(atto) / 1e18
    }
}
