import CarouselRuntime
import MicroHTTP
import Store

/// Webhooks over HTTP (docs/WEBHOOKS.md): listed and read without secrets, created (the URL's
/// host resolved and checked off the request thread), deleted, and their deliveries.
enum WebhookHandlers {
    /// `GET /webhooks`
    static func list(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        .deferred { [directory = api.directory] in
            do throws(StoreError) {
                return WebhookRequests.list(try directory.webhooks())
            } catch {
                return PreparedResponse(Problem.store(error).response)
            }
        }
    }

    /// `GET /webhooks/{id}`
    static func webhook(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        let text = call.route.first!
        let id = try WebhookRequests.id(text)
        return .deferred { [directory = api.directory] in
            do throws(StoreError) {
                guard let webhook = try directory.webhooks().first(where: { $0.id == id }) else {
                    return PreparedResponse(WebhookRequests.notFound(text).response)
                }
                return PreparedReads.uncached(WebhookRequests.json(webhook))
            } catch {
                return PreparedResponse(Problem.store(error).response)
            }
        }
    }

    /// `GET /webhooks/{id}/deliveries`
    static func deliveries(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        let text = call.route.first!
        let id = try WebhookRequests.id(text)
        let limit = try WebhookRequests.deliveriesLimit(of: request)
        return .deferred { [directory = api.directory] in
            do throws(StoreError) {
                guard try directory.webhooks().contains(where: { $0.id == id }) else {
                    return PreparedResponse(WebhookRequests.notFound(text).response)
                }
                return WebhookRequests.deliveries(try directory.deliveries(of: id, limit: limit))
            } catch {
                return PreparedResponse(Problem.store(error).response)
            }
        }
    }

    /// `POST /webhooks`
    static func create(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        let asked = try WebhookRequests.newWebhook(of: request)
        let label = BannerAPI.label(request, call.requestID)
        let requester = call.requester
        // Resolving the host blocks: off the request thread, as the store's work is.
        return .deferred { [directory = api.directory, clock = api.clock, logger = api.logger] in
            do throws(Problem) {
                try WebhookRequests.resolve(asked, allowPrivate: api.webhookAllowPrivate)
                let now = clock()
                let record = WebhookRecord(
                    url: asked.url.description, events: asked.events, secret: asked.secret, createdAt: now,
                    createdBy: requester.actor)
                // The store counts them in the write's transaction: creations racing each other
                // never pass the limit.
                let stored = try Problem.storeResult { () throws(StoreError) in
                    try directory.saveWebhook(
                        record, by: Attribution(by: requester, at: now), keepingAtMost: WebhookRequests.maxWebhooks)
                }
                guard let stored else {
                    throw Problem(
                        status: 409,
                        detail: "there are \(WebhookRequests.maxWebhooks) webhooks, the most kept; "
                            + "DELETE /webhooks/{id} one first")
                }
                logger.notice(
                    "\(label) → webhook \(stored.id) to \(stored.url) created by \(requester.actor): "
                        + stored.events.map(\.rawValue).joined(separator: ", "))
                return PreparedReads.uncached(
                    WebhookRequests.json(stored), status: 201,
                    headers: [HTTPHeader("Location", "/webhooks/\(stored.id)")])
            } catch {
                return api.refused(error, label: label, origin: nil)
            }
        }
    }

    /// `DELETE /webhooks/{id}`
    static func delete(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        let text = call.route.first!
        let id = try WebhookRequests.id(text)
        let label = BannerAPI.label(request, call.requestID)
        let requester = call.requester
        return .deferred { [directory = api.directory, clock = api.clock, logger = api.logger] in
            do throws(StoreError) {
                guard try directory.deleteWebhook(id, by: Attribution(by: requester, at: clock())) else {
                    return api.refused(WebhookRequests.notFound(text), label: label, origin: nil)
                }
                logger.notice("\(label) → webhook \(id) deleted by \(requester.actor)")
                return PreparedResponse(Response(status: 204))
            } catch {
                return api.refused(.store(error), label: label, origin: nil)
            }
        }
    }
}
