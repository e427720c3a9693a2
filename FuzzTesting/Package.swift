// swift-tools-version:5.3
import PackageDescription

// libFuzzer targets, in a package of their own so the main build never needs -sanitize=fuzzer.
// Sources/FairPlay, Licensing, Wire, RedisStore, Speke, COpenSSL and CHiredis are symbolic links to the
// main package's targets, and Sources/LicenseJobCodec/LicenseJob.swift to the job decoder's one file
// (it needs only Licensing, Wire and Foundation), and Sources/LicenseHTTPCodec/ to the edge's request
// codec (Sources/KSMService/Edge/LicenseHTTP*.swift) and the job, reply and status files it reads, so
// the fuzzers build exactly the code that ships.
// Tools version 5.3 on purpose: a plain target with a main.swift is then an executable without
// SwiftPM's renamed entry point, so libFuzzer's own `main` links (as swift-nio-http2's fuzzers do).
// That version passes no package name to the compiler, so run-fuzzer.sh does (`package` access).
let package = Package(
    name: "FairPlayKSMFuzzing",
    dependencies: [
        .package(url: "https://github.com/swift-extras/swift-extras-base64", from: "1.2.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CHiredis", pkgConfig: "hiredis", providers: [.apt(["libhiredis-dev"])]),
        .target(name: "Wire", dependencies: [.product(name: "ExtrasBase64", package: "swift-extras-base64")]),
        .target(name: "FairPlay", dependencies: ["COpenSSL", "Wire"]),
        .target(name: "Licensing", dependencies: ["FairPlay", "COpenSSL", "Wire"]),
        .target(name: "LicenseJobCodec", dependencies: ["Licensing", "Wire"]),
        .target(name: "RedisStore", dependencies: ["CHiredis", "Licensing", "Wire", .product(name: "Logging", package: "swift-log")]),
        .target(name: "FuzzSPC", dependencies: ["FairPlay"]),
        .target(name: "FuzzLicenseJob", dependencies: ["LicenseJobCodec", "Licensing", "Wire"]),
        .target(name: "FuzzRedisReply", dependencies: ["RedisStore", "Licensing"]),
        .target(name: "Speke", dependencies: ["FairPlay", "COpenSSL", "Wire"]),
        .target(name: "FuzzCPIX", dependencies: ["Speke"]),
        .target(name: "LicenseHTTPCodec", dependencies: ["FairPlay", "Licensing", "Wire"]),
        .target(name: "FuzzLicenseHTTP", dependencies: ["LicenseHTTPCodec", "Wire"]),
    ]
)
