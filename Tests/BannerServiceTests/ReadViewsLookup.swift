import MicroHTTP

@testable import BannerAPI

extension PreparedReads {
    /// The shared response a read of `resource` would be copied from (reads themselves queue
    /// their thread's copy: `ReadCache`).
    func response(_ resource: Resource, origin: String?, ifNoneMatch: String?) -> PreparedResponse {
        representation(at: index(of: resource, origin: origin)).representation.response(ifNoneMatch: ifNoneMatch)
    }
}
