import Licensing

extension DemoCatalog {
    /// Each stream's rotation from period 0 to period 1 at `boundaryMilliseconds`: what the storm's
    /// rotating viewers play now and ask for next.
    package func rotationSchedules(boundaryMilliseconds: Int64) throws(LicenseStoreError) -> [RotationSchedule] {
        let tenantID = try StoreIdentifier(tenant)
        return (0..<streams).map { stream in
            RotationSchedule(
                tenant: tenantID, assetID: Array(assetID(stream: stream, period: 0).utf8),
                nextAssetID: Array(assetID(stream: stream, period: 1 % max(periods, 1)).utf8), boundaryMilliseconds: boundaryMilliseconds)
        }
    }
}
