extension LicenseStoreError {
    /// Nil when a batched store call answered one result per request; otherwise the error every
    /// batched call reports alike ("`who` answered 3 of 4 `what`"): results are matched to requests
    /// by position, so a short or long answer must never be read.
    package static func answerCount(
        _ answered: Int, of asked: Int, _ what: String, from who: String = "store",
        code: Code = .backend
    ) -> LicenseStoreError? {
        answered == asked ? nil : LicenseStoreError(code, "\(who) answered \(answered) of \(asked) \(what)")
    }
}
