import FairPlay

/// The load generators' scenario in time, whichever way their requests travel (Kafka jobs for
/// ``LoadGenerator``, HTTP for ``EdgeDemoDevices``): every viewer joins at the configured rate
/// (playback state 1, a new session, key period 0), then at every rotation all of them ask for the
/// next key period at once (state 3 renews the lease). The caller makes and sends each request;
/// the scenario only says when.
struct ViewerScenario: Sendable {
    /// One request of the scenario: whose, for which key period, in which playback state, and in
    /// which rotation burst (nil: a join).
    struct Step: Sendable {
        var viewer: Int
        var period: Int
        var state: PlaybackState
        var burst: Int?
        /// The priority class the request asks for: `continuity` for a renewal, else `new`.
        var priority: String { state == .leaseRenewal ? "continuity" : "new" }
    }

    let configuration: LoadGeneratorConfiguration
    let periods: Int

    /// Plays the scenario from `start`: `make` turns a step into a request (nil: none), `send`
    /// sends one and returns when it is answered or given up, `burstStarts` is called with each
    /// rotation just before its requests go out. Returns when every request was sent and returned.
    func play<Request: Sendable>(
        from start: ContinuousClock.Instant, make: (Step) -> Request?, burstStarts: (Int) -> Void,
        send: @escaping @Sendable (Request) async -> Void
    ) async {
        let interval = Duration.seconds(1 / max(configuration.joinRate, 0.001))
        await withTaskGroup(of: Void.self) { group in
            for viewer in 0..<configuration.viewers {
                let due = start + interval * viewer
                if due > .now { try? await Task.sleep(until: due) }
                if let request = make(Step(viewer: viewer, period: 0, state: .readyToPlay, burst: nil)) {
                    group.addTask { await send(request) }
                }
            }
        }
        for rotation in 1...max(configuration.rotations, 1) where configuration.rotations > 0 {
            try? await Task.sleep(for: configuration.rotationInterval)
            let period = rotation % max(periods, 1)
            let requests = (0..<configuration.viewers).compactMap { viewer in
                make(Step(viewer: viewer, period: period, state: .leaseRenewal, burst: rotation))
            }
            burstStarts(rotation)
            await withTaskGroup(of: Void.self) { group in
                for request in requests { group.addTask { await send(request) } }
            }
        }
    }
}
