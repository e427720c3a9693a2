import Foundation

/// Checks CPIX documents with tools that share no code with ours: the DASH-IF CPIX 2.3 XML Schema
/// (validated by lxml, i.e. libxml2) and the reader of the PyPI package `cpix` (Unified
/// Streaming's pycpix), both run by `python3`.
///
/// The `cpix` package ships the DASH-IF XSDs (`cpix.xsd`, `pskc.xsd`, `xenc-schema.xsd`,
/// `xmldsig-core-schema.xsd`), but its `cpix.xsd` is CPIX 2.2, under which every SPEKE v2 document
/// with a key period is invalid (`KeyPeriodFilter@periodId` is an `xs:ID` there, so it repeats the
/// period's ID). The script below loads those files and applies the CPIX 2.3 changes to the schema
/// tree, each edit commented with the change it applies. The derived schema was compared once
/// with the official CPIX 2.3 `XmlSchema/cpix.xsd` (DASH-IF CPIX repository, tag `CPIX2.3`): the
/// two are identical in canonical form once comments and white space are dropped, and the other
/// three XSDs are byte for byte the same files. Nothing here reads the official copy. libxml2
/// does not check that an `xs:IDREF` names an ID of the document, so the script checks CPIX's one
/// IDREF, `KeyPeriodFilter@periodId`, itself.
///
/// One `python3` run checks every document of a call. Needs `python3` on PATH with `lxml` and
/// `cpix` (which needs `setuptools<71`); scripts/install-deps.sh installs them. Without them the
/// call throws ``Unavailable`` naming what is missing, so a test that relies on it fails rather
/// than passes unchecked.
package enum CPIXSchemaCheck {
    /// What the check found in one document.
    package struct Report: Sendable {
        /// Every problem: not well-formed, a schema violation (`schema: line N: ...`, libxml2's
        /// message), a reader failure or a reference the reader finds broken (`reader: ...`).
        package var problems: [String]
        /// What the independent reader read; nil when it could not read the document.
        package var read: ReadDocument?
        /// The verdict of the `cpix` package's own `cpix.validate`, which uses its CPIX 2.2 schema.
        /// Informational: CPIX 2.2 refuses every document with a `KeyPeriodFilter`.
        package var validAgainstPackagedCPIX22: Bool

        /// Valid against the CPIX 2.3 schema and read by the reader without complaint.
        package var isValid: Bool { problems.isEmpty }
    }

    /// A document as `cpix.parse` reads it. Binary values are the decoded base64.
    package struct ReadDocument: Sendable, Hashable, Decodable {
        package var contentKeys: [ContentKey]
        package var drmSystems: [DRMSystem]
        package var periodIDs: [String]
        package var usageRules: [UsageRule]
        package var deliveryDataCount: Int

        package struct ContentKey: Sendable, Hashable, Decodable {
            /// Lower-case UUID text.
            package var kid: String
            /// The reader's default, `cenc`, when the document has none.
            package var commonEncryptionScheme: String?
            package var explicitIV: [UInt8]?
            /// `pskc:PlainValue`, for a key in the clear.
            package var plainValue: [UInt8]?
            /// The `enc:CipherValue` (IV and ciphertext) of an encrypted key.
            package var cipherValue: [UInt8]?
            /// `pskc:ValueMAC` of an encrypted key.
            package var valueMAC: [UInt8]?
        }

        package struct DRMSystem: Sendable, Hashable, Decodable {
            package var kid: String
            package var systemID: String
            /// The decoded `HLSSignalingData` for the media playlist (`playlist="media"` or none).
            package var mediaSignaling: String?
            /// The decoded `HLSSignalingData` for `playlist="master"`.
            package var masterSignaling: String?
        }

        package struct UsageRule: Sendable, Hashable, Decodable {
            package var kid: String
            package var intendedTrackType: String?
            /// The filters' element names, in document order (`KeyPeriodFilter`, `VideoFilter`, ...).
            package var filters: [String]
        }
    }

    /// python3, lxml or cpix is missing (or does not import).
    package struct Unavailable: Error, CustomStringConvertible {
        package var description: String
    }

    /// The script failed in a way that is not a verdict on a document: the schema the `cpix`
    /// package ships is not the one the edits expect, or the script itself broke.
    package struct CheckFailed: Error, CustomStringConvertible {
        package var description: String
    }

    /// Checks `documents` in one `python3` run; the reports are keyed by name.
    /// - Throws: ``Unavailable`` when python3, lxml or cpix is missing; ``CheckFailed`` otherwise
    ///   when no verdict could be reached.
    package static func check(_ documents: [(name: String, bytes: [UInt8])]) async throws -> [String: Report] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cpix-check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Files are numbered: a document's name need not be a file name.
        for (index, document) in documents.enumerated() {
            try Data(document.bytes).write(to: directory.appendingPathComponent("\(index).xml"))
        }
        let result: ProcessOutput
        do {
            result = try await ProcessRunner.run(
                URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, directory.path], timeout: .seconds(120))
        } catch {
            throw Unavailable(description: "python3 could not be started (\(error)): install Python 3 with lxml and cpix (scripts/install-deps.sh)")
        }
        let install = "run scripts/install-deps.sh (`python3 -m pip install lxml cpix 'setuptools<71'`)"
        // env exits 127 when it finds no python3 on PATH.
        if result.status == 127 {
            throw Unavailable(description: "python3 is not on PATH (\(result.stderrText.trimmingCharacters(in: .whitespacesAndNewlines))): \(install)")
        }
        if result.status == 3 { throw Unavailable(description: "\(result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)): \(install)") }
        guard result.succeeded else {
            throw CheckFailed(description: "the CPIX check exited \(result.status): \(result.stdoutText) \(result.stderrText)")
        }
        let output: Output
        do {
            output = try JSONDecoder().decode(Output.self, from: Data(result.stdout))
        } catch {
            throw CheckFailed(description: "the CPIX check printed no verdict (\(error)): \(result.stdoutText) \(result.stderrText)")
        }
        var reports: [String: Report] = [:]
        for (index, document) in documents.enumerated() {
            guard let verdict = output.documents["\(index)"] else { throw CheckFailed(description: "no verdict for \(document.name)") }
            reports[document.name] = Report(problems: verdict.problems, read: verdict.read, validAgainstPackagedCPIX22: verdict.validAgainstPackagedCPIX22)
        }
        return reports
    }

    /// ``check(_:)`` reduced to its problems: nil for a valid document, else every problem, one a line.
    package static func validate(_ documents: [(name: String, bytes: [UInt8])]) async throws -> [String: String?] {
        try await check(documents).mapValues { $0.isValid ? nil : $0.problems.joined(separator: "\n") }
    }

    private struct Output: Decodable {
        var documents: [String: Verdict]
    }

    private struct Verdict: Decodable {
        var problems: [String]
        var read: ReadDocument?
        var validAgainstPackagedCPIX22: Bool
    }

    /// Exit 3: python3 lacks lxml or cpix. Exit 4: the schema the package ships is not the CPIX 2.2
    /// one the edits apply to. Otherwise exit 0 and one JSON object on standard output.
    static let script = #"""
        import base64, importlib.metadata, importlib.util, json, os, sys, warnings

        missing = [name for name in ("lxml", "cpix") if importlib.util.find_spec(name) is None]
        if missing:
            print("MISSING: python3 (%s) lacks %s" % (sys.executable, " and ".join(missing)))
            sys.exit(3)
        try:
            from lxml import etree
            # cpix imports pkg_resources (setuptools < 71) and leaves its schema file open.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                import cpix
        except ImportError as e:
            print("MISSING: the cpix package of %s does not import (%s); it needs lxml and setuptools<71" % (sys.executable, e))
            sys.exit(3)

        XS = "http://www.w3.org/2001/XMLSchema"
        NS = {"xs": XS}


        def fail(message):
            print("SCHEMA: the cpix package %s ships a cpix.xsd these edits do not fit: %s" % (importlib.metadata.version("cpix"), message))
            sys.exit(4)


        def one(parent, path):
            found = parent.xpath(path, namespaces=NS)
            if len(found) != 1:
                fail("%d matches for %s" % (len(found), path))
            return found[0]


        def fragment(text):
            return etree.fromstring('<xs:schema xmlns:xs="%s" xmlns:cpix="urn:dashif:org:cpix">%s</xs:schema>' % (XS, text))[0]


        # The package's cpix.xsd is CPIX 2.2; the edits below make it CPIX 2.3. Each accepts the 2.3
        # form too, so a package that ships 2.3 passes unchanged. Parsed from its file, so that the
        # imports of pskc.xsd and xmldsig-core-schema.xsd resolve beside it.
        tree = etree.parse(os.path.join(os.path.dirname(cpix.__file__), "schema", "cpix.xsd"))
        root = tree.getroot()

        # CPIX 2.3: KeyPeriodFilter@periodId is an xs:IDREF to a ContentKeyPeriod@id (2.2 typed it
        # xs:ID, so a filter repeated its period's ID and no document with one was valid).
        period_id = one(root, "xs:complexType[@name='KeyPeriodFilterType']/xs:attribute[@name='periodId']")
        if period_id.get("type") not in ("xs:ID", "xs:IDREF"):
            fail("KeyPeriodFilter@periodId is %s" % period_id.get("type"))
        period_id.set("type", "xs:IDREF")

        content_key_type = one(root, "xs:complexType[@name='ContentKeyType']")
        # CPIX 2.3: new simple types CencSchemeType (a string of four characters) and KeyIdType
        # (a UUID in 8-4-4-4-12 hex digits, either case), declared before ContentKeyType.
        for name, definition in [
            ("CencSchemeType",
             '<xs:simpleType name="CencSchemeType" final="restriction"><xs:restriction base="xs:string">'
             '<xs:length value="4"/></xs:restriction></xs:simpleType>'),
            ("KeyIdType",
             '<xs:simpleType name="KeyIdType"><xs:restriction base="xs:string">'
             '<xs:pattern value="[A-Fa-f0-9]{8}-[A-Fa-f0-9]{4}-[A-Fa-f0-9]{4}-[A-Fa-f0-9]{4}-[A-Fa-f0-9]{12}"/>'
             '</xs:restriction></xs:simpleType>'),
        ]:
            if not root.xpath("xs:simpleType[@name='%s']" % name, namespaces=NS):
                content_key_type.addprevious(fragment(definition))

        extension = one(content_key_type, "xs:complexContent/xs:extension[@base='cpix:KeyType']")
        # CPIX 2.3: ContentKey@kid is a cpix:KeyIdType (2.2: xs:string).
        kid = one(extension, "xs:attribute[@name='kid']")
        if kid.get("type") not in ("xs:string", "cpix:KeyIdType"):
            fail("ContentKey@kid is %s" % kid.get("type"))
        kid.set("type", "cpix:KeyIdType")
        # CPIX 2.3: new optional ContentKey@commonEncryptionScheme, a cpix:CencSchemeType.
        if not extension.xpath("xs:attribute[@name='commonEncryptionScheme']", namespaces=NS):
            extension.append(fragment('<xs:attribute name="commonEncryptionScheme" type="cpix:CencSchemeType" use="optional"/>'))

        schema = etree.XMLSchema(tree)


        def decoded(text):
            return None if text is None else list(base64.b64decode("".join(text.split())))


        def signaling(text):
            value = decoded(text)
            return None if value is None else bytes(value).decode("utf-8", "replace")


        def read(data):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                parsed = cpix.parse(data)
                _, content_problems = parsed.validate_content()
            return content_problems, {
                "contentKeys": [
                    {
                        "kid": str(key.kid),
                        "commonEncryptionScheme": key.common_encryption_scheme,
                        "explicitIV": decoded(key.explicit_iv),
                        # The reader puts an encrypted key's CipherValue in `cek` and sets `value_mac`.
                        "plainValue": decoded(key.cek) if key.value_mac is None else None,
                        "cipherValue": decoded(key.cek) if key.value_mac is not None else None,
                        "valueMAC": decoded(key.value_mac),
                    }
                    for key in parsed.content_keys
                ],
                "drmSystems": [
                    {
                        "kid": str(system.kid),
                        "systemID": str(system.system_id),
                        "mediaSignaling": signaling(system.hls_signaling_data),
                        "masterSignaling": signaling(system.hls_signaling_data_master),
                    }
                    for system in parsed.drm_systems
                ],
                "periodIDs": [period.id for period in parsed.periods],
                "usageRules": [
                    {"kid": str(rule.kid), "intendedTrackType": rule.intended_track_type, "filters": [type(f).__name__ for f in rule]}
                    for rule in parsed.usage_rules
                ],
                "deliveryDataCount": len(parsed.delivery_datas),
            }


        # No DTDs, no entities, no network: the documents are ours, but the check is no weaker for it.
        parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
        documents_dir = sys.argv[1]
        verdicts = {}
        for name in sorted(os.listdir(documents_dir)):
            with open(os.path.join(documents_dir, name), "rb") as f:
                data = f.read()
            problems, document, packaged = [], None, False
            try:
                document = etree.fromstring(data, parser)
            except etree.XMLSyntaxError as e:
                problems.append("not well-formed: %s" % e)
            contents = None
            if document is not None:
                if not schema.validate(document):
                    problems += ["schema: line %d: %s" % (error.line, error.message) for error in schema.error_log]
                # libxml2 checks that xs:ID values are unique but not that an xs:IDREF names one (XSD 1.0,
                # "Validation Root Valid (ID/IDREF Table)"). CPIX's one IDREF is KeyPeriodFilter@periodId.
                ids = set(document.xpath("//@id | //@Id"))
                for period_filter in document.iter("{urn:dashif:org:cpix}KeyPeriodFilter"):
                    period = period_filter.get("periodId")
                    if period is not None and period not in ids:
                        problems.append("schema: line %d: KeyPeriodFilter@periodId '%s' (an IDREF) names no ID of the document"
                                        % (period_filter.sourceline, period))
                packaged = cpix.validate(data)[0]
                try:
                    content_problems, contents = read(data)
                    problems += ["reader: %s" % problem for problem in content_problems]
                except Exception as e:
                    problems.append("reader: %s: %s" % (type(e).__name__, e))
            verdicts[os.path.splitext(name)[0]] = {"problems": problems, "read": contents, "validAgainstPackagedCPIX22": packaged}
        print(json.dumps({"documents": verdicts}))
        """#
}
