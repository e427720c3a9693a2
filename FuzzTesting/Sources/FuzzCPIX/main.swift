import Speke

/// libFuzzer entry: feeds each input to the hostile-safe XML reader and, when it yields a tree, to
/// the SPEKE request validation under both versions, then answers a valid request with fixed keys
/// and reads the answer back. Any crash, trap, hang or sanitizer report is a finding; thrown
/// errors are expected.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCPIX(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let root = try? SafeXMLReader.read(bytes, limits: XMLReadLimits(maximumBytes: 1 << 16)) else { return 0 }
    for version in SpekeVersion.allCases {
        guard let request = try? SpekeRequest(root: root, spekeVersion: version) else { continue }
        var keys: [KID: IssuedKey] = [:]
        for key in request.contentKeys {
            keys[key.kid] = try? IssuedKey(key: [UInt8](repeating: 7, count: 16), iv: key.explicitIV ?? [UInt8](repeating: 9, count: 16), skdURI: "skd://fuzz")
        }
        if let response = try? SpekeResponseWriter.response(for: request, keys: keys) {
            // Our own answer must always read back.
            precondition((try? SafeXMLReader.read(response.body)) != nil, "the answer to a valid request does not read back")
        }
    }
    return 0
}
