/// The TLLV blocks of one decrypted payload, in payload order, with lookup by tag.
package struct TLLVList: Sendable {
    package let blocks: [TLLVBlock]

    package init(blocks: [TLLVBlock]) { self.blocks = blocks }

    /// The block with this tag; nil when absent. Tags are unique (the parser rejects duplicates).
    package subscript(tag: TLLVTag) -> TLLVBlock? {
        // A payload holds a few dozen blocks: a linear scan beats building a dictionary per request.
        for block in blocks where block.tag == tag { return block }
        return nil
    }

    package var tags: [TLLVTag] { blocks.map(\.tag) }

    /// Parses the first `declaredLength` bytes of a decrypted payload into blocks, with the framing
    /// checks of Apple's SDK 26 (`readNextTLLV`, `parseTLLV`); the bytes past it are ignored, as there.
    ///
    /// - Throws: `parameterError` for a header or block that runs past the declared length, or a
    ///   value longer than its block; `duplicateTag` for a tag seen twice ("Any TLLV must appear only
    ///   once in the SPC payload"). A block length that is not a multiple of 16 is accepted, as Apple's
    ///   SDK accepts it, although the guide's table 2-2 asks devices for one.
    package static func parse(_ payload: ArraySlice<UInt8>, declaredLength: Int? = nil) throws(FairPlayError) -> TLLVList {
        let length = min(declaredLength ?? payload.count, payload.count)
        var reader = ByteReader(payload.prefix(length))
        var blocks: [TLLVBlock] = []
        blocks.reserveCapacity(32)
        while reader.remaining > 0 {
            let start = reader.bytes.startIndex
            guard let tagValue = reader.readUInt64(), let blockLength = reader.readUInt32() else {
                throw .param("truncated TLLV header: \(reader.remaining) bytes left where 16 are needed")
            }
            let tag = TLLVTag(tagValue)
            // SDK 26 readNextTLLV: the value-length field and the whole block must lie within the payload.
            guard let declared = Int(exactly: blockLength), reader.remaining >= 4, declared <= reader.remaining - 4 else {
                throw FairPlayError(
                    .parameterError, "TLLV block length \(blockLength) runs past the payload (\(max(0, reader.remaining - 4)) bytes left)", tag: tag)
            }
            // The guard above proves 4 bytes remain.
            let valueLength = reader.readUInt32() ?? 0
            // Table 2-2: padding_size = block_length - value_length, so the value lies within the block.
            guard valueLength <= blockLength else {
                throw FairPlayError(.parameterError, "TLLV value length \(valueLength) exceeds its block length \(blockLength)", tag: tag)
            }
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
