import FairPlay
import Foundation
import Licensing
import Wire

/// Secret key files: hex text or raw bytes, never readable by others (``SecretFile``'s rule); the
/// text read is cleansed once decoded. The one reader of KEKs, key seeds and token secrets, for the
/// worker and the admin commands alike.
package enum KeyFile {
    /// A key file or an `ID=PATH` value that cannot be used; `description` names it and what to do.
    package struct Error: Swift.Error, CustomStringConvertible, Sendable {
        package var description: String
        package init(_ description: String) { self.description = description }
    }

    /// - Parameters:
    ///   - lengths: the key lengths accepted (a KEK: 16 or 32 bytes).
    ///   - wrongLength: the message when the file holds another length.
    package static func read(_ path: String, lengths: Set<Int> = [16, 32], wrongLength: String? = nil) throws(Error) -> [UInt8] {
        var data: [UInt8]
        do { data = try SecretFile.read(path) } catch { throw Error(error.description) }
        defer { FairPlayCrypto.cleanse(&data) }
        // Hex decoded from the bytes themselves: a String of the key's digits could not be wiped.
        if var hex = HexEncoding.decode(utf8: data[...], allowingWhitespace: true) {
            if lengths.contains(hex.count) { return hex }
            FairPlayCrypto.cleanse(&hex)
        }
        if lengths.contains(data.count) { return data }
        throw Error(wrongLength ?? "key file \(path) holds neither 16 nor 32 bytes (raw or hex)")
    }

    /// `ID=PATH` (or `KID=PATH`) split at the first `=`; `option` names the flag in the error, which
    /// never quotes the value: an operator who passes a key where its path belongs must not see the
    /// key printed back.
    package static func idAndValue(_ pair: String, option: String) throws(Error) -> (id: String, value: String) {
        guard let eq = pair.firstIndex(of: "=") else { throw Error("\(option) takes ID=PATH; the value given has no '=' (not shown)") }
        guard eq != pair.startIndex else { throw Error("\(option) takes ID=PATH; the value given has an empty ID before '=' (not shown)") }
        return (String(pair[..<eq]), String(pair[pair.index(after: eq)...]))
    }

    /// A keyring of the key files given by ID, and of `hexKeys` (`ID=HEX,...` as UTF-8 bytes, keys
    /// straight from the environment), every key checked for its length and ID. `hexKeys` is
    /// wiped before this returns or throws. An error about an entry names `hexKeysName` and the
    /// entry's position, never its text: a malformed entry may be a bare key.
    package static func keyring(files: [String: String], hexKeys: inout [UInt8], hexKeysName: String = "KSM_KEKS") throws(Error) -> KeyEncryptionKeyring {
        defer { FairPlayCrypto.cleanse(&hexKeys) }
        let keyring = KeyEncryptionKeyring()
        let entries = hexKeys.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
            .filter { !$0.allSatisfy(Self.isWhitespace) }
        for (offset, entry) in entries.enumerated() {
            let position = "\(hexKeysName) entry \(offset + 1) of \(entries.count)"
            guard let eq = entry.firstIndex(of: UInt8(ascii: "=")) else {
                throw Error("\(position) has no ID: write ID=HEX, entries separated by commas (the entry is not shown; it may be a key)")
            }
            let idBytes = entry[..<eq].drop(while: Self.isWhitespace)
            guard !idBytes.isEmpty else { throw Error("\(position) has an empty ID before '=': write ID=HEX") }
            guard let idText = String(validating: idBytes, as: UTF8.self), let id = try? StoreIdentifier(idText) else {
                throw Error("\(position): the ID is not a valid identifier (1 to 128 bytes, no white space, control characters, ':', '{' or '}')")
            }
            guard var key = HexEncoding.decode(utf8: entry[entry.index(after: eq)...], allowingWhitespace: true), key.count == 16 || key.count == 32 else {
                throw Error("\(position): the key is not 16 or 32 bytes of hex")
            }
            do {
                try keyring.add(id: id, key: &key)
            } catch {
                // The keyring's own message names the ID, which here could be a mistyped key.
                FairPlayCrypto.cleanse(&key)
                throw Error("\(position): the keyring refused the key (\(key.count) bytes)")
            }
        }
        for (id, path) in files.sorted(by: { $0.key < $1.key }) {
            var key = try read(path)
            try add(&key, id: id, to: keyring)
        }
        return keyring
    }

    /// A keyring of the key files given by ID.
    package static func keyring(files: [String: String]) throws(Error) -> KeyEncryptionKeyring {
        var none: [UInt8] = []
        return try keyring(files: files, hexKeys: &none)
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
    }

    /// A keyring of one KEK given as `ID=PATH`, whose ID must be `expectedID` when one is given.
    package static func keyring(idAndPath: String, option: String = "--kek", expectedID: String? = nil) throws(Error) -> (
        keyring: KeyEncryptionKeyring, id: StoreIdentifier
    ) {
        let (id, path) = try idAndValue(idAndPath, option: option)
        if let expectedID, id != expectedID { throw Error("\(option) names \(id), but the tenant's KEK is \(expectedID)") }
        let keyring = try keyring(files: [id: path])
        do { return (keyring, try StoreIdentifier(id)) } catch { throw Error("key-encryption key \(id): \(error)") }
    }

    /// A tenant's key seed file (32 bytes, hex or raw): read as a key file is, only its length differs.
    package static func readKeySeed(_ path: String) throws(Error) -> [UInt8] {
        try read(
            path, lengths: [ContentKeyDerivation.seedLength],
            wrongLength: "key seed file \(path) does not hold \(ContentKeyDerivation.seedLength) bytes (raw or hex)")
    }

    /// The key seed at `path`, wrapped (RFC 3394) under the KEK given as `ID=PATH`, whose ID must be `kekID`.
    package static func wrapKeySeed(path: String, kek: String, kekID: StoreIdentifier) throws(Error) -> [UInt8] {
        let (keyring, _) = try keyring(idAndPath: kek, expectedID: kekID.value)
        var seed = try readKeySeed(path)
        defer { FairPlayCrypto.cleanse(&seed) }
        do { return try keyring.wrap(secret: seed, with: kekID) } catch { throw Error("key seed: \(error)") }
    }

    private static func add(_ key: inout [UInt8], id: String, to keyring: KeyEncryptionKeyring) throws(Error) {
        do {
            try keyring.add(id: try StoreIdentifier(id), key: &key)
        } catch {
            throw Error("key-encryption key \(id): \(error)")
        }
    }
}
