/// How a credential recovers the key that opens [SK..R1] (fps-facts.md, "Session key: three ways").
package enum SessionKeySource: Sendable {
    /// SDK 4 and earlier: an Application Secret Key, run through the D function with each SPC's R2.
    case applicationSecretKey([UInt8])
    /// A precomputed DASk, as Apple's development vectors give in place of an ASk.
    case fixedDerivedKey([UInt8])
    /// SDK 5 and later: provisioning data handed to Apple's precompiled libfpscrypto.
    case cryptoLibrary(FPSCryptoLibrary, provisioningData: [UInt8])

    package var kind: String {
        switch self {
        case .applicationSecretKey: "ask"
        case .fixedDerivedKey: "dask"
        case .cryptoLibrary: "provisioning-data"
        }
    }
}
