import FairPlay
import Testing
import Wire

/// AES-CMAC through OpenSSL's EVP_MAC, against RFC 4493 section 4's examples (key
/// 2b7e1516 28aed2a6 abf71588 09cf4f3c; the messages are prefixes of the same 64 bytes).
@Suite("AES-128-CMAC (RFC 4493)") struct CMACTests {
    static let key = [UInt8](hexString: "2b7e151628aed2a6abf7158809cf4f3c")!
    static let message = [UInt8](
        hexString: """
            6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51
            30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710
            """)!

    @Test("RFC 4493 example 2: a 16-byte message")
    func example2() throws {
        let tag = try FairPlayCrypto.aes128CMAC(key: Self.key, [UInt8](hexString: "6bc1bee22e409f96e93d7e117393172a")!)
        #expect(tag.hexString == "070a16b46b4d4144f79bdd9dd04a287c")
    }

    @Test(
        "RFC 4493 examples 1, 3 and 4: empty, 40-byte (partial last block) and 64-byte messages",
        arguments: [(0, "bb1d6929e95937287fa37d129b756746"), (40, "dfa66747de9ae63030ca32611497c827"), (64, "51f0bebf7e3b9d92fc49741779363cfe")])
    func otherExamples(length: Int, expected: String) throws {
        #expect(try FairPlayCrypto.aes128CMAC(key: Self.key, Self.message.prefix(length)).hexString == expected)
    }

    @Test("A key that is not 16 bytes is a parameter error")
    func wrongKeySize() {
        #expect { try FairPlayCrypto.aes128CMAC(key: [UInt8](repeating: 1, count: 15), [1]) } throws: { ($0 as? FairPlayError)?.status == .parameterError }
    }
}
