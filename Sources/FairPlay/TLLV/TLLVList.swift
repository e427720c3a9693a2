/// The TLLV blocks of one decrypted payload, in payload order, with lookup by tag.
public struct TLLVList: Sendable {
    public let blocks: [TLLVBlock]

    public init(blocks: [TLLVBlock]) { self.blocks = blocks }

    /// The block with this tag; nil when absent. Tags are unique (the parser rejects duplicates).
    public subscript(tag: TLLVTag) -> TLLVBlock? {
        // A payload holds a few dozen blocks: a linear scan beats building a dictionary per request.
        for block in blocks where block.tag == tag { return block }
        return nil
    }

    public var tags: [TLLVTag] { blocks.map(\.tag) }

    /// Parses a decrypted payload into blocks, applying the guide's rules (table 2-2 and "SPC Payload Contents").
    ///
    /// - Throws: `parserError` for a header that does not fit, a block length that is not a multiple of 16,
    ///   a value longer than its block, or a block that runs past the payload; `duplicateTag` for a tag seen twice.
    public static func parse(_ payload: ArraySlice<UInt8>) throws(FairPlayError) -> TLLVList {
        var reader = ByteReader(payload)
        var blocks: [TLLVBlock] = []
        blocks.reserveCapacity(32)
        while reader.remaining > 0 {
            let start = reader.bytes.startIndex
            guard let tagValue = reader.readUInt64(), let blockLength = reader.readUInt32(), let valueLength = reader.readUInt32() else {
                throw .parser("truncated TLLV header: \(reader.remaining) bytes left where 16 are needed")
            }
            let tag = TLLVTag(tagValue)
            // Table 2-2: "The block length must be filled out to a multiple of 16 bytes."
            guard blockLength % 16 == 0 else {
                throw .parser("TLLV block length \(blockLength) is not a multiple of 16", tag: tag)
            }
            // Table 2-2: padding_size = block_length - value_length, so the value lies within the block.
            guard valueLength <= blockLength else {
                throw .parser("TLLV value length \(valueLength) exceeds its block length \(blockLength)", tag: tag)
            }
            guard let declared = Int(exactly: blockLength), declared <= reader.remaining else {
                throw .parser("TLLV block length \(blockLength) runs past the payload (\(reader.remaining) bytes left)", tag: tag)
            }
            // "Any TLLV must appear only once in the SPC payload."
            for seen in blocks where seen.tag == tag {
                throw FairPlayError(.duplicateTag, "TLLV tag appears twice", tag: tag)
            }
            let valueStart = reader.bytes.startIndex
            let value = payload[valueStart..<valueStart + Int(valueLength)]
            _ = reader.readBytes(declared)
            blocks.append(TLLVBlock(tag: tag, value: value, raw: payload[start..<reader.bytes.startIndex]))
        }
        return TLLVList(blocks: blocks)
    }
}
