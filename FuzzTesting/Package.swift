// swift-tools-version:5.3
import PackageDescription

// libFuzzer targets, in a package of their own so the main build never needs -sanitize=fuzzer.
// Sources/FairPlay, Sources/Licensing and Sources/COpenSSL are symbolic links to the main package's
// targets, and Sources/LicenseJobCodec/LicenseJob.swift to the job decoder's one file (it needs only
// Licensing and Foundation), so the fuzzers build exactly the code that ships. Tools version 5.3 on
// purpose: a plain target with a main.swift is then an executable without SwiftPM's renamed entry
// point, so libFuzzer's own `main` links (as swift-nio-http2's fuzzers do).
let package = Package(
    name: "FairPlayKSMFuzzing",
    targets: [
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .target(name: "FairPlay", dependencies: ["COpenSSL"]),
        .target(name: "Licensing", dependencies: ["FairPlay", "COpenSSL"]),
        .target(name: "LicenseJobCodec", dependencies: ["Licensing"]),
        .target(name: "FuzzSPC", dependencies: ["FairPlay"]),
        .target(name: "FuzzLicenseJob", dependencies: ["LicenseJobCodec", "Licensing"]),
    ]
)
