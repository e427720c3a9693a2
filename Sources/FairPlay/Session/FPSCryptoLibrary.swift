#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Apple's precompiled libfpscrypto (SDK 5 and later), loaded at run time with `dlopen`.
///
/// The library cannot be redistributed, so nothing links against it: a deployment names its path and
/// its ``Generation`` (SDK 26 and SDK 5.1 read different versions of the struct). Its one call,
/// `KSMCreateKeyPayload(KSMKeyPayload *) -> int32`, takes a struct of eight-byte fields
/// (`KSMKeyPayloadFields`); it derives DASk, opens [SK..R1] (or [SK..R1] v3), checks integrity and
/// encrypts the content key, so the KSM never sees SK. `@unchecked Sendable`: the handle and symbol are
/// immutable and the library is documented as callable from any thread.
public final class FPSCryptoLibrary: @unchecked Sendable {
    /// The `KSMCreateKeyPayload` signature: the struct's address in, Apple's status out.
    package typealias CreateKeyPayload = @convention(c) (UnsafeMutableRawPointer) -> Int32

    package let path: String
    package let generation: Generation
    /// Nil for an in-process stand-in (tests); otherwise owned here and closed in `deinit`.
    private let handle: UnsafeMutableRawPointer?
    private let createKeyPayload: CreateKeyPayload

    /// Capacities of the output buffers, as Apple's SDK allocates them.
    static let huCapacity = 20
    static let contentKeyTLLVPayloadCapacity = 1024
    static let r1Capacity = 44

    /// Loads the library.
    /// - Parameter generation: which SDK's library the file is. Default: ``Generation/sdk26``.
    /// - Throws: `notImplemented` when the file cannot be loaded or lacks `KSMCreateKeyPayload`.
    package init(path: String, generation: Generation = .default) throws(FairPlayError) {
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown dlopen error"
            throw FairPlayError(.notImplemented, "Apple's libfpscrypto could not be loaded from \(path): \(reason)")
        }
        guard let symbol = dlsym(handle, "KSMCreateKeyPayload") else {
            dlclose(handle)
            throw FairPlayError(.notImplemented, "\(path) has no KSMCreateKeyPayload symbol; is it Apple's libfpscrypto?")
        }
        self.path = path
        self.generation = generation
        self.handle = handle
        self.createKeyPayload = unsafeBitCast(symbol, to: CreateKeyPayload.self)
    }

    /// A stand-in for the library in this process, so tests can exercise the struct without Apple's binary.
    package init(generation: Generation, standIn: CreateKeyPayload, name: String = "in-process stand-in") {
        self.path = name
        self.generation = generation
        self.handle = nil
        self.createKeyPayload = standIn
    }

    deinit {
        if let handle { dlclose(handle) }
    }

    /// What one call returns: the content key TLLV to put in the CKC and the session values.
    package struct KeyPayload: Sendable {
        package var contentKeyTLLVTag: TLLVTag
        package var contentKeyTLLVValue: [UInt8]
        /// R1 for the CKC; with the video R1 key it differs from the generic session's R1.
        package var r1: [UInt8]
        package var hu: [UInt8]
        /// The session key the library used: the CKC's session-key version used TLLV carries it.
        package var sessionKey: SessionKeyKind
        /// 2 when the library returned the video R1 key (SDK 26's `R1KeyToUse` video), else 1.
        package var ckcVersion: UInt32
    }

    /// Runs `KSMCreateKeyPayload` for one SPC and content key.
    ///
    /// For ``Generation/sdk26`` the SPC's [SK..R1] v3 and R2 v3 values go in when both are present, and
    /// the video session key is asked for by SDK 26's rule
    /// (``KSMKeyPayloadFields/requestedSessionKey(hasVideoTLLVs:protocolVersionUsed:encryptionScheme:contentType:)``);
    /// the library's answer decides the session key kind and the CKC version. ``Generation/sdk5`` always
    /// answers generic, CKC version 1.
    ///
    /// - Parameters:
    ///   - certificateHash: SHA-1 of the Application Certificate (also for SPC version 3, as SDK 26 does).
    ///   - provisioningData: the provisioning data file's bytes.
    ///   - contentType: 0 unknown, 1 video, 3 audio.
    ///   - encryptionScheme: nil when the caller does not know it (never asks for the video key).
    /// - Throws: the library's own status (it uses Apple's KSM codes) with a reason naming the call;
    ///   `internalError` when the library reports more bytes than a buffer holds or a content key TLLV
    ///   payload of 16 bytes or less (SDK 26 refuses that too).
    package func createKeyPayload(
        payload: SPCPayload, certificateHash: [UInt8], provisioningData: [UInt8],
        contentKey: [UInt8], contentIV: [UInt8], contentType: UInt64, encryptionScheme: EncryptionScheme? = nil
    ) throws(FairPlayError) -> KeyPayload {
        // Older devices send no key formats: the classic 16-byte key format, as Apple's SDK defaults.
        let formats = payload.supportedKeyFormats.isEmpty ? [TLLVTag.encryptedContentKey.rawValue] : payload.supportedKeyFormats
        var key = contentKey
        defer { FairPlayCrypto.cleanse(&key) }
        var hu = [UInt8](repeating: 0, count: Self.huCapacity)
        var tllvPayload = [UInt8](repeating: 0, count: Self.contentKeyTLLVPayloadCapacity)
        var r1 = [UInt8](repeating: 0, count: Self.r1Capacity)
        defer { FairPlayCrypto.cleanse(&tllvPayload) }
        let video = payload.videoSessionKeyTLLVs
        let sessionKeyToUse = KSMKeyPayloadFields.requestedSessionKey(
            hasVideoTLLVs: video != nil, protocolVersionUsed: payload.protocolVersionUsed,
            encryptionScheme: encryptionScheme, contentType: contentType)

        var fields: KSMKeyPayloadFields?
        let status: Int32 = payload.encryptedSessionKeyR1.withUnsafeBytes { skR1P in
            payload.r2.withUnsafeBytes { r2P in
                payload.sessionKeyR1Integrity.withUnsafeBytes { intP in
                    formats.withUnsafeBufferPointer { fmtP in
                        provisioningData.withUnsafeBytes { provP in
                            certificateHash.withUnsafeBytes { hashP in
                                key.withUnsafeBytes { keyP in
                                    contentIV.withUnsafeBytes { ivP in
                                        Self.withOptionalBytes(video?.skR1) { skR1VideoP in
                                            Self.withOptionalBytes(video?.r2) { r2VideoP in
                                                hu.withUnsafeMutableBytes { huP in
                                                    tllvPayload.withUnsafeMutableBytes { tllvP in
                                                        r1.withUnsafeMutableBytes { r1P in
                                                            var laidOut = KSMKeyPayloadFields(
                                                                generation: generation,
                                                                inputs: .init(
                                                                    contentKey: keyP, contentIV: ivP, contentType: contentType,
                                                                    skR1: skR1P, r2: r2P, r1Integrity: intP,
                                                                    supportedKeyFormats: fmtP, cryptoVersionUsed: UInt64(payload.protocolVersionUsed),
                                                                    provisioningData: provP, certHash: hashP,
                                                                    clientHU: huP, contentKeyTLLVPayload: tllvP, r1: r1P,
                                                                    skR1Video: skR1VideoP, r2Video: r2VideoP, sessionKeyToUse: sessionKeyToUse))
                                                            let status = laidOut.words.withUnsafeMutableBytes { words -> Int32 in
                                                                // `words` holds fieldCount (26 or 32) elements, so it has an address.
                                                                guard let base = words.baseAddress else { return FairPlayStatus.internalError.rawValue }
                                                                return createKeyPayload(base)
                                                            }
                                                            fields = laidOut
                                                            return status
                                                        }
                                                    }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        guard status == 0 else {
            throw FairPlayError(FairPlayStatus(rawValue: status), "libfpscrypto (\(generation)) KSMCreateKeyPayload returned \(status)")
        }
        guard let fields else { throw .internal("libfpscrypto call did not run") }
        return try Self.result(fields, hu: hu, tllvPayload: tllvPayload, r1: r1)
    }

    /// Reads the outputs back from the words the library wrote.
    static func result(_ fields: KSMKeyPayloadFields, hu: [UInt8], tllvPayload: [UInt8], r1: [UInt8]) throws(FairPlayError) -> KeyPayload {
        func length(_ index: KSMKeyPayloadFields.Index, capacity: Int) throws(FairPlayError) -> Int {
            guard let word = fields[index], let n = Int(exactly: word), n <= capacity else {
                throw .internal("libfpscrypto reported \(index) \(fields[index] ?? 0), more than the \(capacity)-byte buffer")
            }
            return n
        }
        let huLength = try length(.clientHULength, capacity: hu.count)
        let tllvLength = try length(.contentKeyTLLVPayloadLength, capacity: tllvPayload.count)
        let r1Length = try length(.r1Length, capacity: r1.count)
        // SDK 26 (createContentKeyPayload): a content key payload no longer than one key is an internal error.
        guard tllvLength > 16 else {
            throw .internal("libfpscrypto returned a content key TLLV payload of \(tllvLength) bytes; more than 16 expected")
        }
        let sessionKey: SessionKeyKind = fields[.sessionKeyToUse] == KSMKeyPayloadFields.KeyChoice.video ? .video : .generic
        let ckcVersion: UInt32 = fields[.r1KeyToUse] == KSMKeyPayloadFields.KeyChoice.video ? 2 : 1
        return KeyPayload(
            contentKeyTLLVTag: TLLVTag(fields[.contentKeyTLLVTag] ?? 0),
            contentKeyTLLVValue: Array(tllvPayload.prefix(tllvLength)),
            r1: Array(r1.prefix(r1Length)),
            hu: Array(hu.prefix(huLength)),
            sessionKey: sessionKey,
            ckcVersion: ckcVersion
        )
    }

    /// Lends the bytes of `bytes`, or nil when there are none.
    private static func withOptionalBytes<R>(_ bytes: ArraySlice<UInt8>?, _ body: (UnsafeRawBufferPointer?) -> R) -> R {
        guard let bytes else { return body(nil) }
        return bytes.withUnsafeBytes { body($0) }
    }
}
