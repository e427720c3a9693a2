/// What SPC version 3 needs beyond its container.
extension KeyServerModule {
    /// Refuses a version 3 SPC whose credential cannot open its session key.
    ///
    /// Apple's SDK 26 hands an SPC v3's [SK..R1] v3 and R2 v3 to its precompiled libfpscrypto, the only
    /// code that can open them; SDK 5.1's library has no fields for them, and legacy ASk or fixed DASk
    /// credentials none of the keys. So the container may open and verify and the answer still be
    /// notImplementedErr, naming what the deployment lacks.
    /// - Throws: `notImplemented` unless the credential uses the SDK 26 generation of libfpscrypto.
    static func requireVideoSessionKeyLibrary(_ credential: ApplicationCredential) throws(FairPlayError) {
        let has: String
        switch credential.sessionKeySource {
        case .cryptoLibrary(let library, _):
            if library.generation == .sdk26 { return }
            has = "libfpscrypto of generation \(library.generation)"
        case .applicationSecretKey:
            has = "a legacy ASk and no libfpscrypto"
        case .fixedDerivedKey:
            has = "a fixed DASk and no libfpscrypto"
        }
        throw FairPlayError(
            .notImplemented,
            "SPC version 3 needs Apple's libfpscrypto, SDK 26 generation (provisioning data with --fpscrypto-library and --fpscrypto-generation sdk26), to open [SK..R1] v3 and R2 v3; credential \(credential.name) has \(has)"
        )
    }
}
