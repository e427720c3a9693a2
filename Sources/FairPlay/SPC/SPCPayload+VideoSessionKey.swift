/// SDK 26's video session key TLLVs: [SK..R1] v3 and R2 v3, sent by SPC version 3 clients.
///
/// Only Apple's SDK 26 libfpscrypto opens them; the KSM passes their values through unchanged.
extension SPCPayload {
    /// The two values together; SDK 26 hands them to the library only when both are present and non-empty.
    package struct VideoSessionKeyTLLVs: Sendable {
        /// The [SK..R1] v3 value (at most 256 bytes).
        package let skR1: ArraySlice<UInt8>
        /// The R2 v3 value (at most 64 bytes).
        package let r2: ArraySlice<UInt8>
    }

    /// SDK 26's limits (`FPS_V1_SKR1_V3_MAX_SZ`, `FPS_V1_R2_V3_MAX_SZ`).
    package static let maximumVideoSessionKeyR1Length = 256
    package static let maximumVideoR2Length = 64

    /// Both video TLLVs, or nil when either is absent or empty. Their sizes are checked where the
    /// payload is read (`SPCPayload.init`, SDK 26 `parseTagSessionKeyR1_V3`, `parseTagR2_V3`).
    package var videoSessionKeyTLLVs: VideoSessionKeyTLLVs? {
        guard let skR1 = sessionKeyR1V3, !skR1.isEmpty, let r2 = r2V3, !r2.isEmpty else { return nil }
        return VideoSessionKeyTLLVs(skR1: skR1, r2: r2)
    }
}
