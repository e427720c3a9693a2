/// How much of a document ``SafeXMLReader`` accepts before it stops reading.
///
/// Each limit bounds the work a hostile document can cause: the byte cap bounds memory and time
/// before libxml2 sees a byte, the depth cap bounds recursion in the tree built from it, and the
/// element cap bounds the node count a small document of `<a/>`s could otherwise reach.
package struct XMLReadLimits: Sendable, Hashable {
    /// Largest document accepted, in bytes. Default: 1 MiB (a CPIX request for dozens of keys is a few kB).
    package var maximumBytes: Int
    /// Deepest element nesting accepted, the root counting as 1. Default: 32 (CPIX needs 9).
    package var maximumDepth: Int
    /// Most elements accepted in one document. Default: 20 000.
    package var maximumElements: Int

    package init(maximumBytes: Int = 1 << 20, maximumDepth: Int = 32, maximumElements: Int = 20_000) {
        self.maximumBytes = maximumBytes
        self.maximumDepth = maximumDepth
        self.maximumElements = maximumElements
    }
}
