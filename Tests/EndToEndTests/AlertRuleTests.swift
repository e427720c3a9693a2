import Testing

/// deploy/observability/prometheus-alerts.yaml through promtool: the rules load, and each alert
/// fires (and stays quiet) as its unit tests in prometheus-alerts.test.yaml say.
@Suite struct AlertRuleTests {
    @Test("promtool check rules accepts the shipped alert rules")
    func checkRules() async throws {
        let result = try await Promtool.run(["check", "rules", "deploy/observability/prometheus-alerts.yaml"])
        #expect(result.status == 0, "\(result.output)")
    }

    @Test("promtool test rules: every alert, the gone fleet and the p99 at 1.13 s included, fires as its test says")
    func testRules() async throws {
        let result = try await Promtool.run(["test", "rules", "deploy/observability/prometheus-alerts.test.yaml"])
        #expect(result.status == 0, "\(result.output)")
    }
}
