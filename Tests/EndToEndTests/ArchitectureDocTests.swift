import Foundation
import KSMTestSupport
import Testing

/// docs/architecture.md's dependency table against Package.swift (`swift package dump-package`).
@Suite struct ArchitectureDocTests {
    @Test("Every library and executable target's project dependencies are the ones docs/architecture.md lists")
    func tableMatchesPackage() async throws {
        // A scratch path of its own: `swift test` holds the package's .build lock meanwhile.
        let result = try await ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["swift", "package", "--scratch-path", FileManager.default.temporaryDirectory.appendingPathComponent("ksm-dump-package").path, "dump-package"],
            currentDirectory: KSMBinary.packageRoot, timeout: .seconds(300))
        #expect(result.succeeded, "\(result.stderrText.suffix(2000))")
        let data = Data(result.stdout)
        let manifest = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var package: [String: Set<String>] = [:]
        for target in manifest["targets"] as? [[String: Any]] ?? [] {
            guard let name = target["name"] as? String, ["regular", "executable"].contains(target["type"] as? String) else { continue }
            var dependencies = Set<String>()
            for dependency in target["dependencies"] as? [[String: Any]] ?? [] {
                // Project targets only: by name or target; products of other packages are left out.
                if let byName = dependency["byName"] as? [Any], let first = byName.first as? String { dependencies.insert(first) }
                if let byTarget = dependency["target"] as? [Any], let first = byTarget.first as? String { dependencies.insert(first) }
            }
            package[name] = dependencies
        }

        let doc = try String(contentsOf: KSMBinary.packageRoot.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        let start = try #require(doc.range(of: "<!-- dependencies:begin -->"))
        let end = try #require(doc.range(of: "<!-- dependencies:end -->"))
        var documented: [String: Set<String>] = [:]
        for line in doc[start.upperBound..<end.lowerBound].split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            let name = cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            let listed =
                cells.count > 1
                ? cells[1].split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "` ")) }.filter { $0 != "—" && !$0.isEmpty } : []
            documented[name] = Set(listed)
        }
        #expect(documented == package, "docs/architecture.md: \(documented.sorted { $0.key < $1.key })\nPackage.swift: \(package.sorted { $0.key < $1.key })")
    }
}
