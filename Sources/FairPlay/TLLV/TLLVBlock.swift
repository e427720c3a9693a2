/// One TLLV as it stood in a decrypted payload.
///
/// `value` is the value field; `raw` is the whole block (tag, lengths, value, padding), which is what a
/// CKC returns when the SPC's tag return request asks for this tag. Both are slices of the payload.
public struct TLLVBlock: Sendable {
    public let tag: TLLVTag
    public let value: ArraySlice<UInt8>
    public let raw: ArraySlice<UInt8>
}
