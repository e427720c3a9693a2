/// An error in a value or a file the operator named (a secret file's mode, a key file, the test
/// fixtures): commands report it as a configuration mistake, status 64, not as a run-time failure.
package protocol OperatorFixableError: Error {}

extension SecretFileError: OperatorFixableError {}
extension KeyFile.Error: OperatorFixableError {}
