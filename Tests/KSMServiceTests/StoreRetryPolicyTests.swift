import Testing

@testable import KSMService

/// A store outage is retried twice, only for the jobs it failed, with growing backoff.
@Suite("Store retry policy")
struct StoreRetryPolicyTests {
    let policy = StoreRetryPolicy()

    @Test("after the first answer, only the jobs answered storeUnavailable are retried, 100 ms later")
    func retriesOnlyTheFailedJobs() {
        let statuses: [KSMStatus?] = [.ok, .storeUnavailable, .tooManyStreams, .storeUnavailable]
        #expect(policy.next(afterAttempts: 1, statuses: statuses) == .retry([1, 3], after: .milliseconds(100)))
    }

    @Test("the second retry waits 400 ms, and after it the answers go out as they are")
    func twoRetriesThenDone() {
        let statuses: [KSMStatus?] = [.storeUnavailable]
        #expect(policy.next(afterAttempts: 2, statuses: statuses) == .retry([0], after: .milliseconds(400)))
        #expect(policy.next(afterAttempts: 3, statuses: statuses) == .done)
    }

    @Test("a batch the store did not fail is published at once")
    func nothingFailedIsDone() {
        #expect(policy.next(afterAttempts: 1, statuses: [.ok, nil, .deadlineExpired]) == .done)
    }

    @Test("the retry-after hint for a store outage is jittered between one and two seconds")
    func retryAfterHintIsJittered() {
        var generator = SystemRandomNumberGenerator()
        let hints = (0..<200).map { _ in StoreRetryPolicy.retryAfterMilliseconds(using: &generator) }
        #expect(hints.allSatisfy { (1_000...2_000).contains($0) })
        #expect(Set(hints).count > 1, "every client of a batch would come back at the same moment")
    }
}
