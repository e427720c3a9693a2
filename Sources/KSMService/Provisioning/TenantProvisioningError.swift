/// A tenant that cannot be provisioned as given; `description` names the input and what is wrong.
package struct TenantProvisioningError: Error, Sendable, CustomStringConvertible {
    package var description: String

    package init(_ description: String) {
        self.description = description
    }
}
