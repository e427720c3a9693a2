import FairPlay
import KSMService

extension ServeSetting {
    package static let credentials = ServeSetting(
        "credentials", env: "KSM_CREDENTIALS", .string(default: nil), required: true, example: "/etc/ksm/credentials/certificates.json",
        help: "Apple's certificates.json shape.")
    package static let fpscryptoLibrary = ServeSetting(
        "fpscrypto-library", env: "KSM_FPSCRYPTO_LIBRARY", .string(default: nil), help: "Apple's libfpscrypto, for provisioning-data credentials.")
    package static let fpscryptoGeneration = ServeSetting(
        "fpscrypto-generation", env: "KSM_FPSCRYPTO_GENERATION",
        .choice(FPSCryptoLibrary.Generation.all.map(\.name), default: FPSCryptoLibrary.Generation.default.name),
        help: "Which SDK's libfpscrypto that is: sdk26 (struct version 2, opens SPC v3) or sdk5 (struct version 1).")
    package static let kek = ServeSetting(
        "kek", env: "KSM_KEK_FILES", .map(.strings), help: "Key-encryption key ID=PATH (hex or raw 16/32 bytes); repeatable.")
    package static let protocolVersions = ServeSetting(
        "protocol-versions", env: "KSM_PROTOCOL_VERSIONS", .integerList(0...Int(UInt32.max)), default: "any, as Apple's SDK 26",
        help: "FPS protocol versions accepted as the version a device used.")
    package static let cryptoThreads = ServeSetting(
        "crypto-threads", env: "KSM_CRYPTO_THREADS", .integer(1...1_024, default: nil),
        default: "the cores this process may use (its cgroup quota and cpuset, capped by its affinity mask, as taskset sets it)",
        help: "Threads for RSA and AES work.")
    package static let concurrentBatches = ServeSetting(
        "concurrent-batches", env: "KSM_CONCURRENT_BATCHES", .integer(1...1_024, default: nil), default: "four per crypto thread (at least 4)",
        help: "Batches processed at once.")
}
