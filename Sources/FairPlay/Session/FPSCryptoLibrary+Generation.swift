extension FPSCryptoLibrary {
    /// Which build of Apple's libfpscrypto a deployment has, and so which `KSMKeyPayload` it reads.
    ///
    /// The two builds disagree on the struct: SDK 26's library accepts only struct version 2 (anything
    /// else is paramErr) and reads all 32 fields, the last six being the video session key ([SK..R1] v3,
    /// R2 v3, which key to use); SDK 5.1's library accepts version 1 and reads only the first 26 fields.
    /// The file gives no way to tell them apart, so the operator names the generation. A struct with
    /// static members rather than an enum, so a later SDK can be added without breaking callers.
    ///
    /// Default: ``sdk26``.
    public struct Generation: Hashable, Sendable, CustomStringConvertible {
        /// The value written to the struct's `version` field.
        public let structVersion: UInt64
        /// How many eight-byte fields the library reads; the KSM writes nothing past them.
        public let fieldCount: Int
        /// The name `--fpscrypto-generation` and the `fpscrypto-generation` config key take.
        public let name: String

        private init(structVersion: UInt64, fieldCount: Int, name: String) {
            self.structVersion = structVersion
            self.fieldCount = fieldCount
            self.name = name
        }

        /// SDK 26 (the Rust reference KSM's library): struct version 2, 32 fields, video session key.
        /// The only generation that opens SPC version 3.
        public static let sdk26 = Generation(structVersion: 2, fieldCount: 32, name: "sdk26")
        /// SDK 5.1 (the Swift reference KSM's library): struct version 1, the first 26 fields.
        public static let sdk5 = Generation(structVersion: 1, fieldCount: 26, name: "sdk5")
        /// The generation used when a deployment names none: ``sdk26``, Apple's current SDK.
        public static let `default` = sdk26
        /// Every generation this server knows, newest first.
        public static let all: [Generation] = [.sdk26, .sdk5]

        /// The generation called `name` (`sdk26`, `sdk5`); nil for any other text.
        public init?(name: String) {
            guard let known = Self.all.first(where: { $0.name == name }) else { return nil }
            self = known
        }

        /// Whether the struct has the video session key fields (26-31).
        public var hasVideoSessionKey: Bool { fieldCount > KSMKeyPayloadFields.Index.skR1Video.rawValue }

        public var description: String { name }
    }
}
