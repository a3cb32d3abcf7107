import JSON
import MicroHTTP
import Store
import TimeZones

/// `GET /audit` (docs/AUDIT.md): the query a request asks, and the entries as JSON or CSV,
/// newest first, a page at a time.
enum AuditDocuments {
    /// Entries in a page unless `limit` says otherwise, and at most.
    static let defaultLimit = 100
    static let maximumLimit = 10_000

    /// What the request asks for, and whether as CSV (`Accept: text/csv`); a 400 naming the
    /// parameter that cannot be read, a 422 for `from` not before `to`.
    static func query(of request: borrowing Request) throws(Problem) -> (query: AuditQuery, csv: Bool) {
        let from = try QueryValues.time(request.queryParameter("from"), name: "from")
        let to = try QueryValues.time(request.queryParameter("to"), name: "to")
        if let from, let to, from >= to {
            throw Problem.unprocessable("from (\(from.rfc3339)) must be before to (\(to.rfc3339))")
        }
        let before = try QueryValues.number(request.queryParameter("before"), name: "before", in: 1...Int64.max)
        let limit = try QueryValues.number(request.queryParameter("limit"), name: "limit", in: 1...Int64(maximumLimit))
        let query = AuditQuery(
            from: from, to: to, carousel: request.queryParameter("carousel"), actor: request.queryParameter("actor"),
            before: before, limit: limit.map { Int($0) } ?? defaultLimit)
        return (query, QueryValues.asksForCSV(request))
    }

    /// The page: `{"entries": [...], "next": seq}`, `next` the `before` that asks for the page
    /// after (older entries), null when this one is the last. As CSV, a header row and a row per
    /// entry (`seq` first: the next page is `before` the last row's).
    static func response(_ records: [AuditRecord], of query: AuditQuery, csv: Bool) -> PreparedResponse {
        let next = records.count == query.limit ? records.last?.seq : nil
        guard csv else {
            var object = JSONObject()
            object.add("entries", records.map(json))
            object.add("next", next)
            return PreparedReads.uncached(object)
        }
        var text = CSV.record(["seq", "at", "actor", "action", "carousel", "target", "revision", "requestId"])
        for record in records {
            let entry = record.entry
            text += CSV.record([
                String(record.seq), entry.at.rfc3339, entry.actor, entry.action.rawValue, entry.carousel ?? "",
                entry.target ?? "", entry.revision.map { String($0) } ?? "", entry.requestID ?? "",
            ])
        }
        return PreparedResponse(
            Response(
                status: 200,
                headers: [
                    HTTPHeader("Content-Type", "text/csv; charset=utf-8"), HTTPHeader("Cache-Control", "no-store"),
                ],
                body: Array(text.utf8)))
    }

    static func json(_ record: AuditRecord) -> JSONObject {
        let entry = record.entry
        var object = JSONObject()
        object.add("seq", record.seq)
        object.add("at", entry.at.rfc3339)
        entry.addFields(to: &object)
        return object
    }
}
