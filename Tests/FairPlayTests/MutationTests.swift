import FairPlay
import FairPlayDevice
import Foundation
import KSMTestSupport
import Testing

/// Runs CPU-bound work on a thread of its own, so a long test occupies neither Swift's cooperative
/// pool nor Dispatch's worker pool (each about one thread per core) and starves no suite beside it.
func offCooperativePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

func offCooperativePool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: work()) }.start()
    }
}

/// More than 100,000 corrupted SPCs through the real server: every one is answered, none crashes.
///
/// Mutations that the protocol makes detectable (header fields, truncation, extension, duplicate tags,
/// impossible lengths) must be refused with a status. Random flips inside the encrypted payload may
/// land in bytes no KSM can check (v1/v2 payloads carry no MAC; only [SK..R1] is integrity-protected),
/// so those may open; when they do, the CKC built for them must still open on the device.
@Suite(.serialized, .timeLimit(.minutes(5))) struct MutationTests {
    enum Outcome: Hashable {
        case refused(FairPlayStatus)
        case opened
    }

    static func run(_ server: KeyServerModule, _ spc: [UInt8]) -> (Outcome, SPCRequest?) {
        do {
            let request = try server.open(spc)
            return (.opened, request)
        } catch {
            return (.refused(error.status), nil)
        }
    }

    /// Header byte ranges of an SPC of a given version that a corruption must always be caught in.
    static func protectedHeader(_ version: UInt32) -> [Range<Int>] {
        let keyLength = version == 1 ? 128 : 256
        return [0..<4, 24..<(24 + keyLength), (24 + keyLength)..<(48 + keyLength)]
    }

    @Test("Ciphertext bit flips, truncations and extensions: 90,000 mutants, all answered")
    func ciphertextMutations() async throws {
        let server = try Fixtures.testServer()
        let device = SimulatedDevice(trust: try Fixtures.testTrust())
        // A few base SPCs of each version with the full set of TLLVs.
        var made: [(spc: [UInt8], version: UInt32)] = []
        for version in [UInt32(1), 2] {
            for _ in 0..<3 {
                var o = RoundTripTests.everything(version: version)
                o.playback = nil
                made.append((try device.makeSPC(o).spc, version))
            }
        }
        let bases = made
        let perWorker = 45_000
        let results = await withTaskGroup(of: [String].self) { group in
            for worker in 0..<2 {
                group.addTask {
                    await offCooperativePool {
                        var rng = SplitMix64(state: 0xF00D + UInt64(worker))
                        var failures: [String] = []
                        for i in 0..<perWorker {
                            let base = bases[Int(rng.next() % UInt64(bases.count))]
                            var spc = base.spc
                            let kind = i % 10
                            var mustRefuse = false
                            switch kind {
                            case 0:
                                spc = Array(spc.prefix(Int(rng.next() % UInt64(spc.count))))
                                mustRefuse = true
                            case 1:
                                spc += (0..<(1 + Int(rng.next() % 32))).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                                mustRefuse = true
                            case 2:
                                // A flip in a header field the server must read.
                                let ranges = Self.protectedHeader(base.version)
                                let range = ranges[Int(rng.next() % UInt64(ranges.count))]
                                let at = range.lowerBound + Int(rng.next() % UInt64(range.count))
                                spc[at] ^= UInt8(1 << (rng.next() % 8))
                                mustRefuse = true
                            default:
                                for _ in 0..<(1 + Int(rng.next() % 3)) {
                                    let at = Int(rng.next() % UInt64(spc.count))
                                    spc[at] ^= UInt8(1 << (rng.next() % 8))
                                }
                            }
                            let (outcome, request) = Self.run(server, spc)
                            if mustRefuse, outcome == .opened { failures.append("kind \(kind) mutant \(i) of worker \(worker) opened") }
                            if case .refused(let status) = outcome, !FairPlayStatus.allKnown.contains(status) || status == .noError {
                                failures.append("kind \(kind): status \(status) is not one of Apple's")
                            }
                            if let request {
                                do {
                                    _ = try server.makeCKC(
                                        for: request, CKCContent(contentKey: [UInt8](repeating: 1, count: 16), contentIV: [UInt8](repeating: 2, count: 16)))
                                } catch let error as FairPlayError {
                                    // A garbled return request may name tags the SPC lacks: that is a status too.
                                    if error.status != .missingRequiredTag { failures.append("CKC for an opened mutant failed: \(error)") }
                                } catch {
                                    failures.append("CKC for an opened mutant threw \(error)")
                                }
                            }
                        }
                        return failures
                    }
                }
            }
            var all: [String] = []
            for await f in group { all += f }
            return all
        }
        #expect(results.isEmpty, "\(results.prefix(10))")
    }

    @Test("Plaintext mutations (length lies, duplicate tags, truncated payloads): 12,000 mutants, all refused")
    func plaintextMutations() async throws {
        try await offCooperativePool { try Self.plaintextMutationRun() }
    }

    static func plaintextMutationRun() throws {
        let server = try Fixtures.testServer()
        let device = SimulatedDevice(trust: try Fixtures.testTrust())
        var rng = SplitMix64(state: 0xBEEF)
        var refused = 0
        var failures: [String] = []
        for i in 0..<12_000 {
            let seed = rng.next()
            var o = SPCOptions()
            o.spcVersion = 1
            o.shuffle = false
            o.maximumExtraPadding = 0
            o.reservedTLLVCount = 0
            o.payloadTransform = { payload in Self.mutatePayload(payload, kind: i % 4, seed: seed) }
            let (outcome, _) = Self.run(server, try device.makeSPC(o).spc)
            if case .refused = outcome { refused += 1 } else { failures.append("plaintext mutant \(i) (kind \(i % 4), seed \(seed)) opened") }
        }
        #expect(failures.isEmpty, "\(failures.prefix(10))")
        #expect(refused == 12_000)
    }

    /// Offsets of the TLLV headers in a well-formed payload.
    static func headerOffsets(_ payload: [UInt8]) -> [Int] {
        var offsets: [Int] = []
        var at = 0
        while at + 16 <= payload.count {
            offsets.append(at)
            var reader = ByteReader(payload[(at + 8)...])
            at += 16 + Int(reader.readUInt32() ?? 0)
        }
        return offsets
    }

    static func mutatePayload(_ payload: [UInt8], kind: Int, seed: UInt64) -> [UInt8] {
        var rng = SplitMix64(state: seed)
        var p = payload
        let offsets = headerOffsets(payload)
        let at = offsets[Int(rng.next() % UInt64(offsets.count))]
        func put(_ value: UInt32, _ offset: Int) {
            var encoded: [UInt8] = []
            encoded.appendBigEndian(value)
            p.replaceSubrange(offset..<offset + 4, with: encoded)
        }
        switch kind {
        case 0:
            // Block length not a multiple of 16.
            let lie = 16 * (1 + rng.next() % 8) + 1 + rng.next() % 15
            put(UInt32(lie), at + 8)
        case 1:
            // Value length longer than the block.
            var reader = ByteReader(p[(at + 8)...])
            let block = reader.readUInt32() ?? 0
            put(block + 1 + UInt32(rng.next() % 1000), at + 12)
        case 2:
            // Duplicate one block (the device pads the result to whole AES blocks with zeros: a zero tag
            // block, harmless, so the duplicate is what must be caught).
            let next = offsets.first { $0 > at } ?? payload.count
            p += Array(payload[at..<next])
        default:
            // Block length pointing past the end of the payload.
            let blocks = (payload.count - at) / 16 + 1 + Int(rng.next() % 64)
            put(UInt32(blocks * 16), at + 8)
        }
        return p
    }
}
