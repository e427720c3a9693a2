import FairPlay

/// libFuzzer entry: feeds each input to the SPC container parser, to the TLLV payload parser and typed
/// payload reader (as if it were a decrypted payload, which random bytes never reach through RSA), and
/// to the D function. Any crash, trap or sanitizer report is a finding; thrown errors are expected.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSPC(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = try? SPCContainer.parse(bytes[...])
    if let list = try? TLLVList.parse(bytes[...]) {
        _ = try? SPCPayload(list)
    }
    if (1...55).contains(size) { _ = try? DFunction.hash(r2: bytes) }
    return 0
}
