import FairPlay

extension LicenseJob {
    /// SHA-256 over what shapes this job's answer: the SPC and every field the CKC or the policy
    /// decision depends on. A redelivery has the same digest; a job ID reused for another request
    /// has another, and is answered ``KSMStatus/jobIdReused`` instead of the earlier answer.
    ///
    /// Left out: the deadline and priority (they decide when, not what), and tenant and account
    /// (the stored answer's key holds them already). Each field is written with its length, so no
    /// two different jobs write the same bytes.
    package var requestDigest: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(spc.count + entitlement.utf8.count + 96)
        func field(_ value: some Collection<UInt8>) {
            withUnsafeBytes(of: UInt32(value.count).bigEndian) { bytes += $0 }
            bytes += value
        }
        func optional(_ value: [UInt8]?) {
            bytes.append(value == nil ? 0 : 1)
            if let value { field(value) }
        }
        field(spc)
        field(entitlement.utf8)
        bytes.append(persistent ? 1 : 0)
        bytes.append(checkIn ? 1 : 0)
        optional(streamID)
        optional(titleID)
        optional(keyPeriod.map { Array($0.value.utf8) })
        optional(serverChallenge.map { challenge in withUnsafeBytes(of: challenge.bigEndian) { Array($0) } })
        return FairPlayCrypto.sha256(bytes)
    }
}
