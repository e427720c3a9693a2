/// The content key TLLV of one CKC, with what making it decided for the rest of the CKC.
///
/// Apple's SDK 26 library may answer with the video session key and the video R1: then the CKC returns
/// that R1 (and derives its anti-replay key from it), names the video key in the session-key version
/// used TLLV, and is container version 2. Every other exchange keeps the session's R1, generic, version 1.
struct CKCContentKeyBlock {
    var tag: TLLVTag
    var value: [UInt8]
    /// The R1 the CKC returns and keys the anti-replay step with.
    var r1: [UInt8]
    /// The session key that encrypted the content key.
    var sessionKey: SessionKeyKind
    /// The CKC container version.
    var ckcVersion: UInt32
}
