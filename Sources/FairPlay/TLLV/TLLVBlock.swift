/// One TLLV as it stood in a decrypted payload.
///
/// `value` is the value field; `raw` is the whole block (tag, lengths, value, padding), which is what a
/// CKC returns when the SPC's tag return request asks for this tag. Both are slices of the payload.
package struct TLLVBlock: Sendable {
    package let tag: TLLVTag
    package let value: ArraySlice<UInt8>
    package let raw: ArraySlice<UInt8>
}
