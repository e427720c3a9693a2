import FairPlay
import FairPlayDevice
import Foundation
import KSMService
import KSMTestSupport
import Licensing
import Testing

/// Validates what the worker produces (replies) and what it accepts (sample jobs, policies) against
/// the JSON Schemas in schemas/, with Python's `jsonschema` (Draft 2020-12). Also checks that the
/// schemas reject what the decoders reject, so the two cannot drift apart silently.
///
/// Needs `python3` with the `jsonschema` package on PATH; without it the test fails and says so.
@Suite(.timeLimit(.minutes(1)))
struct SchemaValidationTests {
    static let validator = #"""
        import json, os, sys
        try:
            import jsonschema
        except ImportError as e:
            print("MISSING-JSONSCHEMA: " + str(e))
            sys.exit(3)
        schemas_dir, samples_dir = sys.argv[1], sys.argv[2]
        failures = 0
        count = 0
        for name in sorted(os.listdir(samples_dir)):
            kind, expectation, _ = name.split("--", 2)
            with open(os.path.join(schemas_dir, kind + ".schema.json")) as f:
                schema = json.load(f)
            with open(os.path.join(samples_dir, name)) as f:
                doc = json.load(f)
            validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
            errors = list(validator.iter_errors(doc))
            count += 1
            if expectation == "valid" and errors:
                failures += 1
                print("FAIL %s should be valid: %s" % (name, "; ".join(e.message[:200] for e in errors)))
            elif expectation == "invalid" and not errors:
                failures += 1
                print("FAIL %s should be invalid but validates" % name)
        print("checked %d documents, %d failures" % (count, failures))
        sys.exit(1 if failures else 0)
        """#

    /// Runs python3 with `arguments`; returns exit status and combined output, or nil if python3
    /// could not be started at all.
    static func python(_ arguments: [String]) async -> (status: Int32, output: String)? {
        guard
            let result = try? await ProcessRunner.run(
                URL(fileURLWithPath: "/usr/bin/env"), ["python3"] + arguments, mergeOutput: true,
                timeout: .seconds(120))
        else { return nil }
        return (result.status, result.stdoutText)
    }

    @Test func producedRepliesAndSampleJobsMatchTheSchemas() async throws {
        let world = try World()
        let store = InMemoryLicenseStore()
        try await world.seed(store)
        var processor = try world.processor(store: store, pool: sharedPool)
        // The live asset rotates: its successes carry `next-key`.
        let schedules = RotationScheduleCache()
        schedules.replace(with: [RotationSchedule(tenant: id("acme"), assetID: Array(World.liveAsset.utf8), boundaryMilliseconds: t0 + 120_000)])
        processor.prefetchAdvisor = PrefetchAdvisor(window: PrefetchWindow(), schedules: schedules)

        // Jobs of every outcome: issued (with and without a lease), refused by rules, by lease limit,
        // unknown tenant, expired, garbage SPC, invalid envelopes.
        let play = { (n: UInt64) in MediaPlaybackInfo(creationDate: 1, state: .readyToPlay, sessionID: n) }
        var jobs: [LicenseJob] = []
        jobs.append(try World.job("s-hd", device: world.deviceA, World.options(World.hdAsset)).job)
        jobs.append(try World.job("s-uhd", device: world.deviceA, World.options(World.uhdAsset, main: true)).job)
        for n in 0..<3 {
            var job = try World.job("s-lease-\(n)", device: SimulatedDevice(trust: world.trustA), World.options(World.liveAsset, playback: play(UInt64(n)))).job
            job.priority = .continuity
            jobs.append(job)
        }
        jobs.append(try World.job("s-uhd-baseline", device: world.deviceA, World.options(World.uhdAsset)).job)
        jobs.append(try World.job("s-unknown", tenant: "nobody", device: world.deviceA, World.options(World.hdAsset)).job)
        jobs.append(LicenseJob(id: id("s-late"), tenant: id("acme"), account: id("alice"), spc: [1, 2, 3], deadline: t0 - 1, priority: .prefetch))
        jobs.append(LicenseJob(id: id("s-garbage"), tenant: id("acme"), account: id("alice"), spc: [UInt8](repeating: 9, count: 200)))
        let binaryAsset = try World.job("s-binary-asset", device: world.deviceA, World.options("\u{01}\u{02}bin")).job
        jobs.append(binaryAsset)

        var payloads = jobs.map { $0.jsonBytes() }
        payloads.append(Array("{oops".utf8))
        payloads.append(Array(#"{"id": "bad-spc", "tenant": "acme", "account": "alice", "spc": "@@", "entitlement": ""}"#.utf8))
        let replies = await processor.process(encoded: payloads, now: t0)
        #expect(Set(replies.map(\.status)).count >= 7, "a variety of outcomes: \(replies.map(\.status.name))")
        #expect(replies.contains { $0.leaseExpiresAt != nil })
        #expect(replies.contains { $0.nextKey != nil })
        #expect(replies.contains { $0.assetIDText == nil && $0.assetID != nil })

        // A store outage reply too.
        let down = ScriptedStore(store)
        down.failFetch = LicenseStoreError(.unavailable, "down", isRetriable: true)
        let outage = await (try world.processor(store: down, pool: sharedPool)).process([jobs[0]], now: t0)

        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ksm-schema-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var n = 0
        func write(_ kind: String, _ expectation: String, _ bytes: [UInt8]) throws {
            n += 1
            try Data(bytes).write(to: dir.appendingPathComponent("\(kind)--\(expectation)--\(n).json"))
        }
        for reply in replies + outage { try write("license-reply", "valid", reply.jsonBytes()) }
        for payload in payloads.prefix(jobs.count) { try write("license-job", "valid", payload) }
        try write("license-job", "valid", Array(#"{"id":"m","tenant":"t","account":"a","spc":"AAAA","entitlement":"","future-field":1}"#.utf8))
        for policy in [
            #"{"content-type":"uhd","hdcp":"type1"}"#, #"{"content-type":"audio","hdcp":"none","lease":{"duration":120}}"#, #"{"content-type":"sd"}"#,
        ] {
            try write("policy", "valid", try PolicyDocument(json: Array(policy.utf8)).jsonBytes())
        }

        // What the decoders refuse, the schemas refuse too.
        let refusedJobs = [
            #"{"tenant":"t","account":"a","spc":"AAAA","entitlement":""}"#,
            #"{"id":"a b","tenant":"t","account":"a","spc":"AAAA","entitlement":""}"#,
            #"{"id":"x","tenant":"t:u","account":"a","spc":"AAAA","entitlement":""}"#,
            #"{"id":"x","tenant":"t","account":"a","spc":"@@@@","entitlement":""}"#,
            #"{"id":"x","tenant":"t","account":"a","spc":"AAAA","entitlement":"","deadline":-1}"#,
            #"{"id":"x","tenant":"t","account":"a","spc":"AAAA","entitlement":"","deadline":1.5}"#,
            #"{"id":"x","tenant":"t","account":"a","spc":"AAAA","entitlement":"","priority":"urgent"}"#,
            #"{"id":"x","tenant":"t","account":"a","spc":"AAAA","entitlement":5}"#,
        ]
        for text in refusedJobs {
            let bytes = Array(text.utf8)
            #expect(throws: LicenseJobError.self, "the decoder refuses \(text)") { try LicenseJob(json: bytes) }
            try write("license-job", "invalid", bytes)
        }
        let refusedPolicies = [#"{"content-type":"8k"}"#, #"{"content-type":"hd","hdcp-type":2}"#, #"{"content-type":"hd","hdcp":"type2"}"#]
        for text in refusedPolicies {
            #expect(throws: PolicyDocumentError.self) { try PolicyDocument(json: Array(text.utf8)) }
            try write("policy", "invalid", Array(text.utf8))
        }
        // A reply with a CKC but an error status, and one without a status, break the reply schema.
        try write(
            "license-reply", "invalid",
            Array(#"{"id":"x","status":-43004,"status-name":"tooManyStreams","retriable":false,"reason":"r","rule":"x","ckc":"AAAA"}"#.utf8))
        try write("license-reply", "invalid", Array(#"{"id":"x","status-name":"noErr","retriable":false,"reason":"r","rule":"x"}"#.utf8))
        // Advice on a refusal, and advice without its fetch time.
        try write(
            "license-reply", "invalid",
            Array(
                #"{"id":"x","status":-43004,"status-name":"tooManyStreams","retriable":false,"reason":"r","rule":"x","next-key":{"boundary":5,"fetch-at":4}}"#
                    .utf8))
        try write(
            "license-reply", "invalid",
            Array(#"{"id":"x","status":-42600,"status-name":"x","retriable":false,"reason":"r","rule":"x","next-key":{"boundary":5}}"#.utf8))

        let schemas = Fixtures.packageRoot.appendingPathComponent("schemas").path
        guard let result = await Self.python(["-c", Self.validator, schemas, dir.path]) else {
            Issue.record("python3 could not be started: install Python 3 and `python3 -m pip install jsonschema` to run the schema tests")
            return
        }
        if result.status == 3 || result.output.contains("MISSING-JSONSCHEMA") {
            Issue.record("python3 lacks the jsonschema package (`python3 -m pip install jsonschema`): \(result.output)")
            return
        }
        #expect(result.status == 0, "schema validation failed:\n\(result.output)")
        #expect(result.output.contains("checked \(n) documents"), "\(result.output)")
    }
}
