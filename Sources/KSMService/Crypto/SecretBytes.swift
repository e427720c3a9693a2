import FairPlay

/// Key bytes in a heap buffer of their own, zeroed (`OPENSSL_cleanse`) when the last reference goes.
///
/// Swift arrays are copy-on-write, so zeroing an array that another value still shares zeroes a fresh
/// copy instead; holding a secret here and lending it out only for one call avoids that. `Sendable`
/// (unchecked): the bytes are written once in `init` and only read afterwards.
final class SecretBytes: @unchecked Sendable {
    private let buffer: UnsafeMutableRawBufferPointer

    /// Copies `bytes`; the caller still owns (and should cleanse) its array.
    init(_ bytes: [UInt8]) {
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        count = bytes.count
        buffer.copyBytes(from: bytes)
    }

    /// Takes `bytes`: they are copied in, then zeroed and emptied in the caller's array.
    convenience init(taking bytes: inout [UInt8]) {
        self.init(bytes)
        FairPlayCrypto.cleanse(&bytes)
        bytes = []
    }

    /// The number of secret bytes.
    let count: Int

    deinit {
        FairPlayCrypto.cleanse(buffer)
        buffer.deallocate()
    }

    /// Lends the bytes for one call; the view must not escape.
    func withBytes<T, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> T) throws(E) -> T {
        try body(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
    }

    /// A copy as an array, for an API that needs one; the caller must cleanse it once no other value
    /// shares its storage.
    func copy() -> [UInt8] {
        withBytes { Array($0) }
    }
}
