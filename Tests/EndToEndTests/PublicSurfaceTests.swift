import Foundation
import KSMTestSupport
import Testing

/// The library products' public surface is what an embedder needs and no more: the examples in
/// Examples/Embedding type-check against the built modules from outside the package (without
/// `-package-name`, so `package` declarations are out of reach, as they are to a real dependent),
/// and a `package` declaration stays out of reach.
@Suite struct PublicSurfaceTests {
    static var swiftc: String? {
        ["/opt/swift/usr/bin/swiftc", "/usr/bin/swiftc", "/usr/local/bin/swiftc"].first { FileManager.default.isExecutableFile(atPath: $0) }
            ?? ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":").map { "\($0)/swiftc" }.first {
                FileManager.default.isExecutableFile(atPath: $0)
            }
    }

    /// `swiftc -typecheck` of `files` as a separate module that imports the built library modules.
    static func typecheck(_ files: [String]) async throws -> (status: Int32, output: String) {
        let swiftc = try #require(Self.swiftc, "no swiftc on PATH")
        let products = KSMBinary.url.deletingLastPathComponent()
        let fm = FileManager.default
        // Clang modules the Swift modules were built against: the system-library targets' maps, the
        // maps SwiftPM generates for C targets, and the C targets of the dependencies' checkouts.
        var moduleMaps = try fm.contentsOfDirectory(atPath: KSMBinary.packageRoot.appendingPathComponent("Sources").path)
            .filter { $0.hasPrefix("C") }
            .map { KSMBinary.packageRoot.appendingPathComponent("Sources/\($0)/module.modulemap").path }
            .filter { fm.fileExists(atPath: $0) }
        moduleMaps += try fm.contentsOfDirectory(atPath: products.path)
            .filter { $0.hasSuffix(".build") }
            .map { products.appendingPathComponent("\($0)/module.modulemap").path }
            .filter { fm.fileExists(atPath: $0) }
        let checkouts = KSMBinary.packageRoot.appendingPathComponent(".build/checkouts")
        if let walker = fm.enumerator(atPath: checkouts.path) {
            for case let path as String in walker where path.hasSuffix("/module.modulemap") && path.contains("/Sources/") && !path.contains("/Tests/") {
                moduleMaps.append(checkouts.appendingPathComponent(path).path)
            }
        }
        let arguments =
            ["-typecheck", "-parse-as-library", "-I", products.appendingPathComponent("Modules").path]
            + moduleMaps.flatMap { ["-Xcc", "-fmodule-map-file=\($0)"] } + files
        let result = try await ProcessRunner.run(
            URL(fileURLWithPath: swiftc), arguments, currentDirectory: KSMBinary.packageRoot, timeout: .seconds(300))
        return (result.status, String(decoding: result.stdout + result.stderr, as: UTF8.self))
    }

    @Test("the embedding examples compile from outside the package, with public declarations only")
    func examplesUsePublicSurfaceOnly() async throws {
        let directory = KSMBinary.packageRoot.appendingPathComponent("Examples/Embedding")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".swift") }.sorted()
        #expect(files.count >= 3)
        let result = try await Self.typecheck(files.map { directory.appendingPathComponent($0).path })
        #expect(result.status == 0, "\(result.output.prefix(4000))")
    }

    @Test("a package declaration is out of reach of a module outside the package")
    func packageDeclarationsStayInside() async throws {
        let file = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("ksm-outside-\(getpid()).swift")
        try Data("import KSMService\nlet keyFile = KeyFile.self\n".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try await Self.typecheck([file.path])
        #expect(result.status != 0)
        #expect(result.output.contains("cannot find 'KeyFile' in scope"), "\(result.output.prefix(2000))")
    }
}
