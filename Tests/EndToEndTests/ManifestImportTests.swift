import Foundation
import KSMTestSupport
import Testing

/// Package.swift against the sources: every target, test targets included, declares exactly the
/// modules its Swift files import. A declared module nothing imports is a link the binary carries
/// for nothing (or test code in the shipping binary); an import nothing declares builds only while
/// some other target happens to pull the module in.
@Suite struct ManifestImportTests {
    /// Dependencies declared on purpose without an import, and why.
    static let linkOnly: [String: [String: String]] = [
        "KSMTestSupport": ["TestRunWatchdog": "linked for its C constructors, which arm in a test bundle"],
        "EndToEndTests": ["ksm": "the executable the tests run, built before them"],
    ]

    @Test("Every target declares exactly the project targets and products its sources import")
    func declaredModulesAreImported() async throws {
        let root = KSMBinary.packageRoot
        // A scratch path of its own: `swift test` holds the package's .build lock meanwhile.
        let result = try await ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["swift", "package", "--scratch-path", FileManager.default.temporaryDirectory.appendingPathComponent("ksm-dump-imports").path, "dump-package"],
            currentDirectory: root, timeout: .seconds(300))
        #expect(result.succeeded, "\(result.stderrText.suffix(2000))")
        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
        let targets = manifest["targets"] as? [[String: Any]] ?? []

        var declared: [String: Set<String>] = [:]
        for target in targets {
            guard let name = target["name"] as? String, target["type"] as? String != "system" else { continue }
            var modules = Set<String>()
            for dependency in target["dependencies"] as? [[String: Any]] ?? [] {
                // Products are named after their module in every package this one uses.
                for kind in ["byName", "target", "product"] {
                    if let value = dependency[kind] as? [Any], let first = value.first as? String { modules.insert(first) }
                }
            }
            declared[name] = modules
        }
        // What an import can name that a manifest could declare: the project's targets, the products
        // it uses, and every module of the packages it depends on (an undeclared NIOHTTP1 counts).
        var known = Set(targets.compactMap { $0["name"] as? String }).union(declared.values.joined())
        let checkouts = root.appendingPathComponent(".build/checkouts")
        for package in (try? FileManager.default.contentsOfDirectory(atPath: checkouts.path)) ?? [] {
            let sources = checkouts.appendingPathComponent(package).appendingPathComponent("Sources")
            known.formUnion((try? FileManager.default.contentsOfDirectory(atPath: sources.path)) ?? [])
        }

        var mismatches: [String] = []
        for target in targets {
            guard let name = target["name"] as? String, let modules = declared[name] else { continue }
            let folder = (target["path"] as? String) ?? ((target["type"] as? String == "test" ? "Tests/" : "Sources/") + name)
            let imported = try Self.imports(under: root.appendingPathComponent(folder)).intersection(known)
            let expected = modules.subtracting(Self.linkOnly[name].map { Set($0.keys) } ?? [])
            if imported != expected {
                mismatches.append(
                    "\(name): declared, never imported: \(expected.subtracting(imported).sorted()); imported, not declared: \(imported.subtracting(expected).sorted())"
                )
            }
        }
        #expect(mismatches.isEmpty, "Package.swift and the imports disagree:\n\(mismatches.joined(separator: "\n"))")
    }

    /// The modules named by `import` lines of the Swift files under `folder` (attributes, access
    /// levels and `import struct X.Y` forms included).
    static func imports(under folder: URL) throws -> Set<String> {
        var modules = Set<String>()
        guard let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else { return modules }
        for case let file as URL in files where file.pathExtension == "swift" {
            for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") {
                var words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })[...]
                while let first = words.first, first.hasPrefix("@") || ["public", "package", "internal", "fileprivate", "private"].contains(first) {
                    words = words.dropFirst()
                }
                guard words.first == "import", words.count > 1 else { continue }
                words = words.dropFirst()
                if ["struct", "class", "enum", "protocol", "func", "var", "let", "typealias"].contains(words.first), words.count > 1 {
                    words = words.dropFirst()
                }
                if let path = words.first, let module = path.split(separator: ".").first { modules.insert(String(module)) }
            }
        }
        return modules
    }
}
