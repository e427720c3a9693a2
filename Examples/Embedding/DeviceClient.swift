// A test client: a simulated Apple device that builds an SPC for an asset and opens the CKC.
import FairPlay
import FairPlayDevice

/// The device's side of one key request: returns the SPC to send and, given the CKC, the key in it.
func deviceRequest(trust: DeviceTrust, assetID: String) throws -> (spc: [UInt8], open: @Sendable ([UInt8]) throws -> OpenedCKC) {
    var options = SPCOptions()
    options.assetID = Array(assetID.utf8)
    let (spc, session) = try SimulatedDevice(trust: trust).makeSPC(options)
    return (spc, { ckc in try CKCOpener.open(ckc, session: session) })
}
