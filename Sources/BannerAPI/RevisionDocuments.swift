import Definitions
import JSON
import MicroHTTP
import Store

/// A carousel's history as the admin API shows it (docs/HISTORY.md): the list of revisions kept
/// and each revision's definition. Read from the store on each request and never cached: the
/// history holds who changed what, for the admin role only.
enum RevisionDocuments {
    /// `{"carousel", "revisions": [{"revision", "at", "actor", "summary"}]}`, newest first.
    static func list(_ records: [RevisionRecord], of carousel: String) -> PreparedResponse {
        var object = JSONObject()
        object.add("carousel", carousel)
        object.add(
            "revisions",
            records.map { record in
                var entry = JSONObject()
                entry.add("revision", record.revision)
                entry.add("at", record.at.rfc3339)
                entry.add("actor", record.actor)
                entry.add("summary", record.summary)
                return entry
            })
        return PreparedReads.uncached(object)
    }

    /// The definition as it was, in the shape `GET /carousels/{name}` answers (its `revision`
    /// that one): what a `PUT` takes back as it is.
    static func document(_ revision: Revision) -> PreparedResponse {
        PreparedReads.uncached(revision.definition.json(revision: revision.record.revision))
    }

    /// The revision number a path names (1 and up, decimal digits only), or the 404.
    static func number(_ text: String, of carousel: String) throws(Problem) -> UInt64 {
        guard text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let number = Int64(text), number > 0
        else {
            throw Problem(
                status: 404,
                detail: "'\(text)' is not a revision of carousel '\(carousel)': revisions are numbered 1, 2, 3…; "
                    + "GET /carousels/\(carousel)/revisions lists those kept")
        }
        return UInt64(number)
    }

    /// The 404 for a revision that was never made or is no longer kept.
    static func notKept(_ number: UInt64, of carousel: String) -> Problem {
        Problem(
            status: 404,
            detail: "carousel '\(carousel)' keeps no revision \(number) (the last 1,000 and those of the last 90 days "
                + "are kept); GET /carousels/\(carousel)/revisions lists them")
    }
}
