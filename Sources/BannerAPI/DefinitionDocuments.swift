import Carousel
import Definitions
import JSON
import MicroHTTP
import Store

/// The admin API's documents: a definition (with its revision) or a banner, with the
/// definition's ETag.
enum DefinitionDocuments {
    static func definition(
        _ stored: StoredCarousel, tag: String, status: Int, ifNoneMatch: String? = nil, headers: [HTTPHeader]
    ) -> Response {
        respond(
            stored.definition.json(revision: stored.revision), tag: tag, status: status, ifNoneMatch: ifNoneMatch,
            headers: headers)
    }

    static func banner(_ banner: Banner, tag: String, status: Int, ifNoneMatch: String? = nil, headers: [HTTPHeader])
        -> Response
    {
        respond(BannerDecoding.json(banner), tag: tag, status: status, ifNoneMatch: ifNoneMatch, headers: headers)
    }

    private static func respond(
        _ object: JSONObject, tag: String, status: Int, ifNoneMatch: String?, headers: [HTTPHeader]
    ) -> Response {
        let representation = Representation(
            etag: tag, body: object.line, headers: PreparedReads.jsonHeaders + headers)
        if status == 200 { return representation.response(ifNoneMatch: ifNoneMatch).response }
        var response = representation.ok.response
        response.status = status
        return response
    }
}
