// The protocol alone, as a platform's own HTTP handler would use it: an SPC in, a CKC out, with
// the content key and terms the platform decided. No Kafka, no Redis.
import FairPlay
import KSMService

/// Opens `spc` with the credentials in Apple's certificates.json shape and answers it.
func answer(spc: [UInt8], credentialsPath: String, contentKey: [UInt8], contentIV: [UInt8]) throws -> [UInt8] {
    let server = KeyServerModule(credentials: try CredentialStore(try CredentialsFile.load(path: credentialsPath)))
    let request = try server.open(spc)
    // The asset ID is what the player put in the skd:// URI; a platform looks its key up with it.
    _ = Array(request.assetID)
    let content = CKCContent(
        contentKey: contentKey, contentIV: contentIV, keyDuration: .lease(600), hdcp: .type0, requiredSecurityLevel: .baseline)
    return try server.makeCKC(for: request, content)
}

/// Apple's own JSON interface (`fairplay-streaming-request` in, `fairplay-streaming-response` out).
func answer(appleJSON: [UInt8], server: KeyServerModule) -> [UInt8] {
    AppleJSONProcessor(server: server).processToJSON(appleJSON)
}
