#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Apple's precompiled libfpscrypto (SDK 5 and later), loaded at run time with `dlopen`.
///
/// The library cannot be redistributed, so nothing links against it: a deployment names its path.
/// Its one call, `KSMCreateKeyPayload(KSMKeyPayload *) -> int32`, takes a struct of 32 eight-byte fields
/// (fps-facts.md lists them in order); it derives DASk, opens [SK..R1], checks integrity and encrypts the
/// content key, so the KSM never sees SK. `@unchecked Sendable`: the handle and symbol are immutable and
/// the library is documented as callable from any thread.
public final class FPSCryptoLibrary: @unchecked Sendable {
    public let path: String
    private let handle: UnsafeMutableRawPointer
    private typealias CreateKeyPayload = @convention(c) (UnsafeMutableRawPointer) -> Int32
    private let createKeyPayload: CreateKeyPayload

    /// Loads the library.
    /// - Throws: `notImplemented` when the file cannot be loaded or lacks `KSMCreateKeyPayload`.
    public init(path: String) throws(FairPlayError) {
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown dlopen error"
            throw FairPlayError(.notImplemented, "Apple's libfpscrypto could not be loaded from \(path): \(reason)")
        }
        guard let symbol = dlsym(handle, "KSMCreateKeyPayload") else {
            dlclose(handle)
            throw FairPlayError(.notImplemented, "\(path) has no KSMCreateKeyPayload symbol; is it Apple's libfpscrypto?")
        }
        self.path = path
        self.handle = handle
        self.createKeyPayload = unsafeBitCast(symbol, to: CreateKeyPayload.self)
    }

    deinit { dlclose(handle) }

    /// What one call returns: the content key TLLV to put in the CKC and the session values.
    public struct KeyPayload: Sendable {
        public var contentKeyTLLVTag: TLLVTag
        public var contentKeyTLLVValue: [UInt8]
        public var r1: [UInt8]
        public var hu: [UInt8]
    }

    /// Field indices of the 32-field `KSMKeyPayload` struct (fps-facts.md).
    private enum Field: Int {
        case version = 0, contentKey, contentKeyLength, contentIV, contentIVLength, contentType
        case skR1, skR1Length, r2, r2Length, r1Integrity, r1IntegrityLength
        case supportedKeyFormats, numberOfSupportedKeyFormats, cryptoVersionUsed
        case provisioningData, provisioningDataLength, certHash, certHashLength
        case clientHU, clientHULength, contentKeyTLLVTag, contentKeyTLLVPayload, contentKeyTLLVPayloadLength
        case r1, r1Length, skR1Video, skR1VideoLength, r2Video, r2VideoLength, sessionKeyToUse, r1KeyToUse
    }

    /// Runs `KSMCreateKeyPayload` for one SPC and content key.
    ///
    /// - Parameter contentType: 0 unknown, 1 video, 3 audio.
    /// - Throws: the library's own status (it uses Apple's KSM codes) with a reason naming the call.
    public func createKeyPayload(
        payload: SPCPayload, certificateHash: [UInt8], provisioningData: [UInt8],
        contentKey: [UInt8], contentIV: [UInt8], contentType: UInt64
    ) throws(FairPlayError) -> KeyPayload {
        var fields = [UInt64](repeating: 0, count: 32)
        var skR1 = Array(payload.encryptedSessionKeyR1)
        var r2 = Array(payload.r2)
        var integrity = Array(payload.sessionKeyR1Integrity)
        var formats = payload.supportedKeyFormats.isEmpty ? [TLLVTag.encryptedContentKey.rawValue] : payload.supportedKeyFormats
        var provisioning = provisioningData
        var hash = certificateHash
        var key = contentKey
        var iv = contentIV
        var hu = [UInt8](repeating: 0, count: 20)
        var tllvPayload = [UInt8](repeating: 0, count: 1024)
        var r1 = [UInt8](repeating: 0, count: 44)
        defer { FairPlayCrypto.cleanse(&key) }

        func address(_ p: UnsafeMutableRawPointer?) -> UInt64 { UInt64(UInt(bitPattern: p)) }
        let status: Int32 = skR1.withUnsafeMutableBytes { skR1P in
            r2.withUnsafeMutableBytes { r2P in
                integrity.withUnsafeMutableBytes { intP in
                    formats.withUnsafeMutableBytes { fmtP in
                        provisioning.withUnsafeMutableBytes { provP in
                            hash.withUnsafeMutableBytes { hashP in
                                key.withUnsafeMutableBytes { keyP in
                                    iv.withUnsafeMutableBytes { ivP in
                                        hu.withUnsafeMutableBytes { huP in
                                            tllvPayload.withUnsafeMutableBytes { tllvP in
                                                r1.withUnsafeMutableBytes { r1P in
                                                    fields[Field.version.rawValue] = 1
                                                    fields[Field.contentKey.rawValue] = address(keyP.baseAddress)
                                                    fields[Field.contentKeyLength.rawValue] = UInt64(keyP.count)
                                                    fields[Field.contentIV.rawValue] = address(ivP.baseAddress)
                                                    fields[Field.contentIVLength.rawValue] = UInt64(ivP.count)
                                                    fields[Field.contentType.rawValue] = contentType
                                                    fields[Field.skR1.rawValue] = address(skR1P.baseAddress)
                                                    fields[Field.skR1Length.rawValue] = UInt64(skR1P.count)
                                                    fields[Field.r2.rawValue] = address(r2P.baseAddress)
                                                    fields[Field.r2Length.rawValue] = UInt64(r2P.count)
                                                    fields[Field.r1Integrity.rawValue] = address(intP.baseAddress)
                                                    fields[Field.r1IntegrityLength.rawValue] = UInt64(intP.count)
                                                    fields[Field.supportedKeyFormats.rawValue] = address(fmtP.baseAddress)
                                                    fields[Field.numberOfSupportedKeyFormats.rawValue] = UInt64(fmtP.count / 8)
                                                    fields[Field.cryptoVersionUsed.rawValue] = UInt64(payload.protocolVersionUsed ?? 1)
                                                    fields[Field.provisioningData.rawValue] = address(provP.baseAddress)
                                                    fields[Field.provisioningDataLength.rawValue] = UInt64(provP.count)
                                                    fields[Field.certHash.rawValue] = address(hashP.baseAddress)
                                                    fields[Field.certHashLength.rawValue] = UInt64(hashP.count)
                                                    fields[Field.clientHU.rawValue] = address(huP.baseAddress)
                                                    fields[Field.clientHULength.rawValue] = UInt64(huP.count)
                                                    fields[Field.contentKeyTLLVPayload.rawValue] = address(tllvP.baseAddress)
                                                    fields[Field.contentKeyTLLVPayloadLength.rawValue] = UInt64(tllvP.count)
                                                    fields[Field.r1.rawValue] = address(r1P.baseAddress)
                                                    fields[Field.r1Length.rawValue] = UInt64(r1P.count)
                                                    // Non-nil: `fields` holds 32 elements.
                                                    return fields.withUnsafeMutableBytes { createKeyPayload($0.baseAddress!) }
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
            throw FairPlayError(FairPlayStatus(rawValue: status), "libfpscrypto KSMCreateKeyPayload returned \(status)")
        }
        let huLength = Int(min(fields[Field.clientHULength.rawValue], 20))
        let tllvLength = Int(min(fields[Field.contentKeyTLLVPayloadLength.rawValue], 1024))
        let r1Length = Int(min(fields[Field.r1Length.rawValue], 44))
        return KeyPayload(
            contentKeyTLLVTag: TLLVTag(fields[Field.contentKeyTLLVTag.rawValue]),
            contentKeyTLLVValue: Array(tllvPayload.prefix(tllvLength)),
            r1: Array(r1.prefix(r1Length)),
            hu: Array(hu.prefix(huLength))
        )
    }
}
