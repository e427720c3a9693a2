import Hummingbird
import NIOCore

/// The edge's request context: hummingbird's basic one plus the connection's peer address, which
/// the rate limit keys anonymous clients by.
package struct EdgeRequestContext: RequestContext, RemoteAddressRequestContext {
    package var coreContext: CoreRequestContextStorage
    package let remoteAddress: SocketAddress?

    package init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
    }

    /// The peer's IP address as text; nil for a Unix socket or when unknown.
    package var clientAddress: String? { remoteAddress?.ipAddress }
}
