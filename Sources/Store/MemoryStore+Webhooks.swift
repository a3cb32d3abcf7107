import Carousel
import Definitions
import Threading
import TimeZones

extension MemoryStore: WebhookStore {
    public func saveWebhook(_ webhook: WebhookRecord, by attribution: Attribution, keepingAtMost limit: Int)
        throws(StoreError) -> WebhookRecord?
    {
        contents.withLock { contents in
            guard contents.webhooks.count < limit else { return nil }
            contents.lastWebhookID += 1
            let stored = webhook.stored(as: contents.lastWebhookID)
            contents.webhooks[stored.id] = stored
            contents.append([AuditEntry(.createWebhook, attribution, target: stored.auditTarget)])
            return stored
        }
    }

    public func webhooks() throws(StoreError) -> [WebhookRecord] {
        contents.withLock { $0.webhooks.values.sorted { $0.id < $1.id } }
    }

    public func deleteWebhook(_ id: Int64, by attribution: Attribution) throws(StoreError) -> Bool {
        contents.withLock { contents in
            guard let deleted = contents.webhooks.removeValue(forKey: id) else { return false }
            contents.deliveries = contents.deliveries.filter { $0.value.webhook != id }
            contents.append([AuditEntry(.deleteWebhook, attribution, target: deleted.auditTarget)])
            return true
        }
    }

    // MARK: Webhook deliveries

    /// A queued delivery (`DeliveryRecord`'s fields, and the claim).
    struct Delivery {
        let webhook: Int64
        let event: QueuedEvent
        var attempts = 0
        var nextAttemptAt: Timestamp?
        var claimedUntil: Timestamp?
        var attemptLog: [DeliveryAttempt] = []
        var deliveredAt: Timestamp?

        var lastAttempt: DeliveryAttempt? { attemptLog.last }

        func record(_ number: Int64) -> DeliveryRecord {
            DeliveryRecord(
                number: number, event: event.id, type: event.type.rawValue, createdAt: event.at, attempts: attempts,
                nextAttemptAt: nextAttemptAt, deliveredAt: deliveredAt, lastAttempt: lastAttempt,
                attemptLog: attemptLog)
        }
    }

    public func queue(_ events: [QueuedEvent]) throws(StoreError) {
        contents.withLock { $0.queue(events) }
    }

    public func claimDeliveries(dueAt now: Timestamp, until: Timestamp, limit: Int) throws(StoreError)
        -> [DueDelivery]
    {
        contents.withLock { contents in
            let due = contents.deliveries.filter { _, delivery in
                delivery.nextAttemptAt.map { $0 <= now } ?? false && delivery.claimedUntil.map { $0 <= now } ?? true
            }.sorted { ($0.value.nextAttemptAt!, $0.key) < ($1.value.nextAttemptAt!, $1.key) }.prefix(limit)
            return due.compactMap { number, delivery in
                guard let webhook = contents.webhooks[delivery.webhook] else { return nil }
                contents.deliveries[number]?.claimedUntil = until
                return DueDelivery(
                    number: number, webhook: webhook.id, event: delivery.event.id, type: delivery.event.type.rawValue,
                    body: delivery.event.body, createdAt: delivery.event.at, attempts: delivery.attempts,
                    url: webhook.url, secret: webhook.secret)
            }
        }
    }

    public func finishDelivery(_ number: Int64, _ attempt: DeliveryAttempt, retryAt: Timestamp?) throws(StoreError) {
        contents.withLock { contents in
            guard var delivery = contents.deliveries[number] else { return }
            delivery.attempts += 1
            delivery.attemptLog.append(attempt)
            delivery.deliveredAt = attempt.delivered ? attempt.at : nil
            delivery.nextAttemptAt = attempt.delivered ? nil : retryAt
            delivery.claimedUntil = nil
            contents.deliveries[number] = delivery
        }
    }

    public func nextDeliveryDue() throws(StoreError) -> Timestamp? {
        contents.withLock { contents in
            contents.deliveries.values.compactMap { delivery in
                delivery.nextAttemptAt.map { max($0, delivery.claimedUntil ?? $0) }
            }.min()
        }
    }

    public func deliveries(of webhook: Int64, limit: Int) throws(StoreError) -> [DeliveryRecord] {
        contents.withLock { contents in
            contents.deliveries.filter { $0.value.webhook == webhook }.sorted { $0.key > $1.key }.prefix(limit).map {
                $0.value.record($0.key)
            }
        }
    }

    public func forgetDeliveries(doneBefore cutoff: Timestamp) throws(StoreError) -> Int {
        contents.withLock { contents in
            let before = contents.deliveries.count
            contents.deliveries = contents.deliveries.filter { _, delivery in
                delivery.nextAttemptAt != nil
                    || (delivery.deliveredAt ?? delivery.lastAttempt?.at ?? delivery.event.at) >= cutoff
            }
            return before - contents.deliveries.count
        }
    }
}
