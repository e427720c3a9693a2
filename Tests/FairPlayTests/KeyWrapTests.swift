import FairPlay
import Testing
import Wire

/// AES Key Wrap against RFC 3394 section 4 test vectors (128- and 256-bit KEKs; OpenSSL also has
/// 192-bit wrap, which this project does not accept as a KEK size).
@Suite struct KeyWrapTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        let section: String
        let kek: String
        let key: String
        let wrapped: String
        var testDescription: String { "RFC 3394 \(section)" }
    }

    static let vectors: [Vector] = [
        // 4.1 Wrap 128 bits of Key Data with a 128-bit KEK
        Vector(
            section: "4.1", kek: "000102030405060708090A0B0C0D0E0F", key: "00112233445566778899AABBCCDDEEFF",
            wrapped: "1FA68B0A8112B447AEF34BD8FB5A7B829D3E862371D2CFE5"),
        // 4.3 Wrap 128 bits of Key Data with a 256-bit KEK
        Vector(
            section: "4.3", kek: "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F", key: "00112233445566778899AABBCCDDEEFF",
            wrapped: "64E8C3F9CE0F5BA263E9777905818A2A93C8191E7D6E8AE7"),
        // 4.6 Wrap 256 bits of Key Data with a 256-bit KEK
        Vector(
            section: "4.6", kek: "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F",
            key: "00112233445566778899AABBCCDDEEFF000102030405060708090A0B0C0D0E0F",
            wrapped: "28C9F404C4B810F4CBCCB35CFB87F8263F5786E2D80ED326CBC7F0E71A99F43BFB988B9B7A02DD21"),
    ]

    @Test(arguments: vectors)
    func wrapAndUnwrapMatchRFC(_ v: Vector) throws {
        let kek = try #require([UInt8](hexString: v.kek))
        let key = try #require([UInt8](hexString: v.key))
        let wrapped = try #require([UInt8](hexString: v.wrapped))
        #expect(try FairPlayCrypto.aesKeyWrap(kek: kek, key: key) == wrapped)
        #expect(try FairPlayCrypto.aesKeyUnwrap(kek: kek, wrapped: wrapped) == key)
    }

    @Test func alteredWrappedKeyFailsIntegrity() throws {
        let v = Self.vectors[0]
        let kek = try #require([UInt8](hexString: v.kek))
        var wrapped = try #require([UInt8](hexString: v.wrapped))
        wrapped[5] ^= 0x01
        let error = #expect(throws: FairPlayError.self) { try FairPlayCrypto.aesKeyUnwrap(kek: kek, wrapped: wrapped) }
        #expect(error?.reason.contains("integrity") == true)
    }

    @Test func wrongKEKFailsIntegrity() throws {
        let v = Self.vectors[0]
        let wrapped = try #require([UInt8](hexString: v.wrapped))
        #expect(throws: FairPlayError.self) { try FairPlayCrypto.aesKeyUnwrap(kek: [UInt8](repeating: 7, count: 16), wrapped: wrapped) }
    }

    @Test func badSizesAreParameterErrors() throws {
        let kek16 = [UInt8](repeating: 1, count: 16)
        for kek in [[UInt8](repeating: 1, count: 24), [UInt8](repeating: 1, count: 15), []] {
            let error = #expect(throws: FairPlayError.self) { try FairPlayCrypto.aesKeyWrap(kek: kek, key: [UInt8](repeating: 2, count: 16)) }
            #expect(error?.status == .parameterError)
        }
        for key in [[UInt8](repeating: 2, count: 8), [UInt8](repeating: 2, count: 17), []] {
            let error = #expect(throws: FairPlayError.self) { try FairPlayCrypto.aesKeyWrap(kek: kek16, key: key) }
            #expect(error?.status == .parameterError)
        }
        for wrapped in [[UInt8](repeating: 2, count: 16), [UInt8](repeating: 2, count: 25)] {
            let error = #expect(throws: FairPlayError.self) { try FairPlayCrypto.aesKeyUnwrap(kek: kek16, wrapped: wrapped) }
            #expect(error?.status == .parameterError)
        }
    }

    @Test func randomKeysRoundTrip() throws {
        for kekSize in [16, 32] {
            let kek = FairPlayCrypto.randomBytes(kekSize)
            for _ in 0..<20 {
                let key = FairPlayCrypto.randomBytes(16)
                let wrapped = try FairPlayCrypto.aesKeyWrap(kek: kek, key: key)
                #expect(wrapped.count == 24)
                #expect(try FairPlayCrypto.aesKeyUnwrap(kek: kek, wrapped: wrapped) == key)
            }
        }
    }
}
