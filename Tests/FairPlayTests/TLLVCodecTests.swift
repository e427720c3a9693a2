import FairPlay
import Testing

@Suite struct TLLVCodecTests {
    static func header(_ tag: UInt64, block: UInt32, value: UInt32) -> [UInt8] {
        var b: [UInt8] = []
        b.appendBigEndian(tag)
        b.appendBigEndian(block)
        b.appendBigEndian(value)
        return b
    }

    @Test("Writer pads every block to a multiple of 16 and the reader gets the values back")
    func roundTrip() throws {
        var writer = TLLVWriter()
        for length in [0, 1, 15, 16, 17, 44, 200] {
            writer.append(TLLVTag(UInt64(length) + 1), [UInt8](repeating: UInt8(length & 0xFF), count: length), extraPaddingBlocks: length % 3)
        }
        #expect(writer.bytes.count % 16 == 0)
        let list = try TLLVList.parse(writer.bytes[...])
        #expect(list.blocks.count == 7)
        for block in list.blocks {
            let length = Int(block.tag.rawValue) - 1
            #expect(block.value.count == length)
            #expect(block.raw.count % 16 == 0)
        }
    }

    @Test("Padding is never all 0x00 or all 0xFF")
    func paddingIsRandom() {
        for _ in 0..<2000 {
            var writer = TLLVWriter()
            writer.append(.assetID, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15])
            let padding = writer.bytes[31]
            #expect(padding != 0x00 && padding != 0xFF)
        }
    }

    @Test("A block length that is not a multiple of 16 is accepted, as SDK 26's readNextTLLV accepts it")
    func blockLengthNotMultiple() throws {
        let bytes = Self.header(0x1111, block: 17, value: 1) + [UInt8](repeating: 7, count: 17)
        let list = try TLLVList.parse(bytes[...])
        #expect(list.blocks.count == 1)
        #expect(Array(list[TLLVTag(0x1111)]?.value ?? []) == [7])
    }

    @Test("A value longer than its block is paramErr naming the tag (SDK 26 readNextTLLV)")
    func valueLongerThanBlock() {
        let bytes = Self.header(0x2222, block: 16, value: 17) + [UInt8](repeating: 7, count: 16)
        #expect { try TLLVList.parse(bytes[...]) } throws: {
            ($0 as? FairPlayError)?.status == .parameterError && ($0 as? FairPlayError)?.tag == TLLVTag(0x2222)
        }
    }

    @Test("A block running past the payload is paramErr (SDK 26 readNextTLLV)")
    func blockPastPayload() {
        let bytes = Self.header(0x3333, block: 48, value: 4) + [UInt8](repeating: 7, count: 32)
        #expect { try TLLVList.parse(bytes[...]) } throws: { ($0 as? FairPlayError)?.status == .parameterError }
    }

    @Test("A truncated header is paramErr (SDK 26 readBigEndianU64 past the end)")
    func truncatedHeader() {
        let bytes = Self.header(0x4444, block: 16, value: 4) + [UInt8](repeating: 7, count: 16) + [1, 2, 3]
        #expect { try TLLVList.parse(bytes[...]) } throws: { ($0 as? FairPlayError)?.status == .parameterError }
    }

    @Test("Bytes past the declared payload length are not read")
    func declaredLengthBounds() throws {
        let bytes = Self.header(0x5555, block: 16, value: 4) + [UInt8](repeating: 7, count: 16) + [1, 2, 3]
        #expect(try TLLVList.parse(bytes[...], declaredLength: 32).blocks.count == 1)
    }

    @Test("A duplicate tag is dupTagErr")
    func duplicateTag() {
        var writer = TLLVWriter()
        writer.append(.assetID, [1, 2])
        writer.append(.transactionID, [UInt8](repeating: 0, count: 8))
        writer.append(.assetID, [3, 4])
        #expect { try TLLVList.parse(writer.bytes[...]) } throws: { ($0 as? FairPlayError)?.status == .duplicateTag && ($0 as? FairPlayError)?.tag == .assetID }
    }

    @Test("Unknown tags are kept and skipped, never rejected")
    func unknownTagsSkipped() throws {
        var writer = TLLVWriter()
        writer.append(TLLVTag(0xdead_beef_0000_0001), [1, 2, 3])
        writer.append(.assetID, [9, 9])
        let list = try TLLVList.parse(writer.bytes[...])
        #expect(list[.assetID]?.value.elementsEqual([9, 9]) == true)
        #expect(list.tags.count == 2)
    }
}
