import LicenseHTTPCodec
import Wire

/// libFuzzer entry for the edge's request codec: every input is a player's body, read as each
/// `ckc-format` asks, then answered. Thrown errors are expected; a crash, trap, sanitizer report or
/// hang is a finding, and so is a request that breaks the codec's promises: an SPC outside 8 bytes
/// to 64 KiB or of a version other than 1, 2 or 3, an answer of the wrong status, a refusal carrying
/// the CKC, or an error message quoting the body's base64.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLicenseHTTP(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let body = Array(UnsafeBufferPointer(start: data, count: size))
    let ckc: [UInt8] = Array(repeating: 0xC5, count: 48)
    for query in [[:], ["ckc-format": "tags"]] {
        do {
            let request = try LicenseHTTPRequest.parse(body: body, contentType: "application/x-www-form-urlencoded", query: query)
            let version = request.spc.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            guard request.spc.count >= 8, request.spc.count <= 64 * 1024, (1...3).contains(version) else {
                fatalError("a parsed request holds bytes that cannot start an SPC")
            }
            guard request.answer(to: LicenseReply(id: "f", status: .ok, reason: "", ckc: ckc, rule: "r")).status == 200 else {
                fatalError("a license is not answered 200")
            }
            let refused = request.answer(to: LicenseReply(id: "f", status: .tooManyStreams, reason: "full", ckc: ckc, rule: "r"))
            guard refused.status == 403, !refused.body.contains(0xC5), !String(decoding: refused.body, as: UTF8.self).contains(Base64.encode(ckc)) else {
                fatalError("a refusal is not a 403 free of the CKC")
            }
        } catch {
            let answer = error.answer()
            guard answer.status == error.status, [400, 413, 415].contains(error.status) else { fatalError("a request error of status \(error.status)") }
            // A message quotes no run of 24 letters and digits from the body (base64 is made of them;
            // no word of a message is that long).
            let runs = body.split { !($0 >= 0x30 && $0 <= 0x39 || $0 >= 0x41 && $0 <= 0x5A || $0 >= 0x61 && $0 <= 0x7A) }
            if let run = runs.first(where: { $0.count >= 24 }), error.message.contains(String(decoding: run.prefix(24), as: UTF8.self)) {
                fatalError("a request error quotes the body")
            }
        }
    }
    return 0
}
