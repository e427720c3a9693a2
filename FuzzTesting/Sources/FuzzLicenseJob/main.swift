import LicenseJobCodec
import Licensing
import Wire

/// libFuzzer entry for the job decoder: every input goes to `JSONParser` and to `LicenseJob(json:)`
/// (the path every Kafka message takes before anything else). Thrown errors are expected; a crash,
/// trap, sanitizer report or hang is a finding. What decodes must re-encode to itself, so a
/// decoder that accepts what it cannot write back is a finding too.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLicenseJob(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let value = try? JSONParser.parse(bytes) {
        _ = value.encoded()
    }
    do {
        let job = try LicenseJob(json: bytes)
        guard (try? LicenseJob(json: job.jsonBytes())) == job else { fatalError("a decoded job does not survive its own encoding") }
    } catch {
        _ = error.description
    }
    return 0
}
