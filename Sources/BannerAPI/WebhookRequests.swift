import JSON
import MicroHTTP
import Store
import TimeZones
import Webhooks

/// `POST /webhooks`' body, checked, and the documents of `/webhooks` (docs/WEBHOOKS.md). A
/// webhook's secret is in no answer and no log line: the one who set it has it.
enum WebhookRequests {
    /// The most webhooks a service keeps: each event is queued once per webhook.
    static let maxWebhooks = 100
    static let secretBytes = 16...256

    /// What `POST /webhooks` asks for; its host is not yet resolved (that blocks: `resolve`).
    struct NewWebhook {
        let url: WebhookURL
        let events: [WebhookEvent]
        let secret: String
    }

    /// The body checked: a 400 or 422 naming the field.
    static func newWebhook(of request: borrowing Request) throws(Problem) -> NewWebhook {
        guard let body = try CommandBody.document(of: request) else {
            throw Problem.badRequest(
                "missing body; send a JSON object {\"url\", \"events\", \"secret\"} with Content-Type: application/json"
            )
        }
        do throws(FieldError) {
            let fields = try JSONFields(body)
            try fields.rejectUnknown(allowing: ["url", "events", "secret"])
            let text = try fields.required("url", .string)
            let url: WebhookURL
            do throws(WebhookURLError) {
                url = try WebhookURL(text)
            } catch {
                throw FieldError(field: "url", message: "'\(text)' \(error.message)")
            }
            let listed = try fields.required("events", .array)
            guard !listed.isEmpty else {
                throw FieldError(field: "events", message: "name at least one event: \(eventNames)")
            }
            var events: [WebhookEvent] = []
            for (position, element) in listed.enumerated() {
                let name = try JSONKind<String>.string.read(element, at: "events[\(position)]")
                guard let event = WebhookEvent(rawValue: name) else {
                    throw FieldError(field: "events[\(position)]", message: "'\(name)' is no event; use \(eventNames)")
                }
                events.append(event)
            }
            let secret = try fields.required("secret", .string)
            guard secretBytes.contains(secret.utf8.count), secret.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
            else {
                throw FieldError(
                    field: "secret",
                    message: "use \(secretBytes.lowerBound) to \(secretBytes.upperBound) printable ASCII characters "
                        + "without spaces (e.g. openssl rand -hex 32)")
            }
            return NewWebhook(url: url, events: events, secret: secret)
        } catch {
            throw Problem.unprocessable("\(error.field): \(error.message)")
        }
    }

    private static var eventNames: String { WebhookEvent.allCases.map(\.rawValue).joined(separator: ", ") }

    /// The URL's host resolved and checked (`WebhookAddresses`): a 422 naming `url` when it leads
    /// to an address that is not public (unless `allowPrivate`) or cannot be resolved. Blocks.
    static func resolve(_ asked: NewWebhook, allowPrivate: Bool) throws(Problem) {
        do throws(WebhookURLError) {
            _ = try WebhookAddresses.resolve(asked.url, allowPrivate: allowPrivate)
        } catch {
            throw Problem.unprocessable("url: '\(asked.url)' \(error.message)")
        }
    }

    /// A webhook id in a path; a 404 when it is not one.
    static func id(_ text: String) throws(Problem) -> Int64 {
        guard let id = Int64(text), id > 0 else { throw notFound(text) }
        return id
    }

    static func notFound(_ id: String) -> Problem {
        Problem(status: 404, detail: "no webhook \(id); GET /webhooks lists them")
    }

    /// `{"id", "url", "events", "createdAt", "createdBy"}`: never the secret.
    static func json(_ webhook: WebhookRecord) -> JSONObject {
        var object = JSONObject()
        object.add("id", webhook.id)
        object.add("url", webhook.url)
        object.add("events", webhook.events.map(\.rawValue))
        object.add("createdAt", webhook.createdAt.rfc3339)
        object.add("createdBy", webhook.createdBy)
        return object
    }

    /// Deliveries listed unless `limit` says otherwise, and at most.
    static let defaultDeliveries = 100
    static let maximumDeliveries = 1000

    /// `?limit=` of `GET /webhooks/{id}/deliveries`; a 400 when it is not 1 to 1000.
    static func deliveriesLimit(of request: borrowing Request) throws(Problem) -> Int {
        let limit = try QueryValues.number(
            request.queryParameter("limit"), name: "limit", in: 1...Int64(maximumDeliveries))
        return limit.map { Int($0) } ?? defaultDeliveries
    }

    /// `{"deliveries": [{"id", "type", "at", "state", "attempts", "nextAttemptAt",
    /// "deliveredAt", "lastAttempt": {"at", "status", "error"}, "attemptLog": [attempt, …]}]}`,
    /// newest first; each delivery's attempts oldest first.
    static func deliveries(_ records: [DeliveryRecord]) -> PreparedResponse {
        var object = JSONObject()
        object.add(
            "deliveries",
            records.map { record in
                var delivery = JSONObject()
                delivery.add("id", record.event)
                delivery.add("type", record.type)
                delivery.add("at", record.createdAt.rfc3339)
                delivery.add("state", record.state.rawValue)
                delivery.add("attempts", record.attempts)
                delivery.add("nextAttemptAt", record.nextAttemptAt?.rfc3339)
                delivery.add("deliveredAt", record.deliveredAt?.rfc3339)
                delivery.add("lastAttempt", record.lastAttempt.map(json))
                delivery.add("attemptLog", record.attemptLog.map(json))
                return delivery
            })
        return PreparedReads.uncached(object)
    }

    /// `{"at", "status", "error"}`: when, and the receiver's status or why there was none.
    private static func json(_ attempt: DeliveryAttempt) -> JSONObject {
        var object = JSONObject()
        object.add("at", attempt.at.rfc3339)
        object.add("status", attempt.status)
        object.add("error", attempt.error)
        return object
    }

    static func list(_ webhooks: [WebhookRecord]) -> PreparedResponse {
        var object = JSONObject()
        object.add("webhooks", webhooks.map(json))
        return PreparedReads.uncached(object)
    }
}
