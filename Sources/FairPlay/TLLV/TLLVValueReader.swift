/// Reads fixed-offset fields out of one TLLV value, the way Apple's SDK 26 parsers do: a field that
/// lies past the end of the value is `parameterError` (SDK 26 `readBigEndianU32`, `readBytes`).
///
/// Bytes past the last field read are ignored, as there; a size rule stricter than that is checked by
/// the caller, with the status Apple's parser for that tag uses.
struct TLLVValueReader {
    let value: ArraySlice<UInt8>
    let tag: TLLVTag

    init(_ block: TLLVBlock) {
        value = block.value
        tag = block.tag
    }

    var count: Int { value.count }

    func uint32(at offset: Int) throws(FairPlayError) -> UInt32 {
        let b = try bytes(at: offset, count: 4)
        let i = b.startIndex
        return UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
    }

    func uint64(at offset: Int) throws(FairPlayError) -> UInt64 {
        UInt64(try uint32(at: offset)) << 32 | UInt64(try uint32(at: offset + 4))
    }

    func bytes(at offset: Int, count: Int) throws(FairPlayError) -> ArraySlice<UInt8> {
        guard offset >= 0, count >= 0, offset <= value.count, count <= value.count - offset else {
            throw FairPlayError(
                .parameterError, "\(tag.name ?? "TLLV") value of \(value.count) bytes has no field at bytes \(offset)..<\(offset + count)", tag: tag)
        }
        let start = value.startIndex + offset
        return value[start..<start + count]
    }

    /// Throws `status` unless the value is exactly `length` bytes.
    func require(exactly length: Int, _ status: FairPlayStatus) throws(FairPlayError) {
        guard value.count == length else {
            throw FairPlayError(status, "\(tag.name ?? "TLLV") value is \(value.count) bytes, expected \(length)", tag: tag)
        }
    }
}
