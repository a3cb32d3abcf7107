import BannerService
import CarouselRuntime
import Foundation
import TestSupport
import Testing
import TimeZones

/// Webhook deliveries end to end (docs/WEBHOOKS.md): the service on the real clock, a receiver
/// on 127.0.0.1 (`webhookAllowPrivate`), writes made over HTTP; what arrives is checked as a
/// receiver would, the signature by an independent HMAC.
@Suite("Webhook deliveries")
struct WebhookDeliveryTests {
    static let secret = WebhookAPITests.secret

    enum Store: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { rawValue }

        func start() async throws -> LiveService {
            switch self {
            case .sqlite: try await LiveService(webhookAllowPrivate: true)
            case .postgres:
                try await LiveService(
                    store: .postgres(uri: await PostgresServer.shared().createDatabase()), webhookAllowPrivate: true)
            }
        }
    }

    /// The webhook's id.
    static func hook(_ service: any TestService, to receiver: WebhookReceiver, events: [String]) async throws -> Int {
        let created = try await WebhookAPITests.create(
            service, url: "http://127.0.0.1:\(receiver.port)/hooks", events: events)
        #expect(created.status == 201, "\(created.text)")
        return try #require(try created.json["id"] as? Int)
    }

    static func deliveries(_ service: any TestService, of id: Int) async throws -> [[String: Any]] {
        try #require(
            try await service.request("GET", "/webhooks/\(id)/deliveries").json["deliveries"] as? [[String: Any]])
    }

    static func body(_ received: WebhookReceiver.Received) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(received.body.utf8)) as? [String: Any])
    }

    static func patch(_ service: any TestService, _ path: String, _ body: String) async throws -> HTTPResponse {
        try await service.request(
            "PATCH", path, headers: [("Content-Type", "application/merge-patch+json")], body: body)
    }

    @Test(arguments: Store.allCases)
    func writesAreDeliveredSignedAndListed(_ store: Store) async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let service = try await store.start()
        let id = try await Self.hook(
            service, to: receiver, events: ["carousel.changed", "carousel.published", "takeover.started"])
        #expect(try await Self.patch(service, "/carousels/default", #"{"interval": 30}"#).status == 200)
        #expect(try await service.request("POST", "/banner/next").status == 200, "a move is not told")
        let takeover = try await AdminAPITests.json(
            service, "POST", "/carousels/default/takeover", #"{"banner": "b2"}"#)
        #expect(takeover.status == 200, "\(takeover.text)")
        let at = Date().addingTimeInterval(15).formatted(.iso8601)
        let scheduled = try await Self.patch(service, "/carousels/default?at=\(at)", #"{"interval": 40}"#)
        #expect(scheduled.status == 202, "\(scheduled.text)")

        #expect(await eventually(within: 30) { receiver.received.count >= 3 })
        let received = receiver.received
        #expect(
            received.map { $0.headers["x-carousel-event"] } == [
                "carousel.changed", "takeover.started", "carousel.published",
            ])
        for request in received {
            let body = try Self.body(request)
            #expect(request.method == "POST" && request.target == "/hooks")
            #expect(body["id"] as? String == request.headers["x-carousel-delivery"])
            #expect(body["type"] as? String == request.headers["x-carousel-event"])
            #expect((body["data"] as? [String: Any])?["carousel"] as? String == "default")
            #expect(
                try await signatureHolds(
                    request.headers["x-carousel-signature"], secret: Self.secret, body: request.body))
        }
        let changed = try #require(try Self.body(received[0])["data"] as? [String: Any])
        #expect(changed["action"] as? String == "carousel.patch" && changed["actor"] as? String == "loopback")
        #expect(changed["revision"] as? Int == 2 && changed["requestId"] is String)
        let published = try #require(try Self.body(received[2])["data"] as? [String: Any])
        #expect(published["applied"] as? Bool == true && published["revision"] as? Int == 3)

        var listed: [[String: Any]] = []
        #expect(
            await eventually(within: 30) {
                listed = (try? await Self.deliveries(service, of: id)) ?? []
                return listed.count == 3 && listed.allSatisfy { $0["state"] as? String == "delivered" }
            })
        #expect(listed.map { $0["type"] as? String } == ["carousel.published", "takeover.started", "carousel.changed"])
        let last = try #require(listed.first?["lastAttempt"] as? [String: Any])
        #expect(last["status"] as? Int == 204 && last["error"] is NSNull && listed.first?["attempts"] as? Int == 1)
        #expect(receiver.received.count == 3, "each delivered once")
    }

    /// A takeover ended by a command is told with that command's entry; one that runs out is told
    /// at the instant it ends, though no write happens then.
    @Test func aTakeoverThatEndsIsToldWhetherEndedOrRunOut() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let service = try await Store.sqlite.start()
        _ = try await Self.hook(service, to: receiver, events: ["takeover.ended"])
        let timed = try await AdminAPITests.json(
            service, "POST", "/carousels/default/takeover", #"{"banner": "b2", "seconds": 1}"#)
        #expect(timed.status == 200, "\(timed.text)")
        let until = try #require(try timed.json["takeover"] as? [String: Any])["until"] as? String
        #expect(await eventually { receiver.received.count >= 1 })
        let expired = try Self.body(try #require(receiver.received.first))
        #expect(expired["type"] as? String == "takeover.ended" && expired["at"] as? String == until)
        let data = try #require(expired["data"] as? [String: Any])
        #expect(data["action"] as? String == "takeover.expire" && data["actor"] as? String == "clock")
        #expect(data["target"] as? String == "b2" && data["carousel"] as? String == "default")

        let held = try await AdminAPITests.json(service, "POST", "/carousels/default/takeover", #"{"banner": "b3"}"#)
        #expect(held.status == 200)
        #expect(try await service.request("DELETE", "/carousels/default/takeover").status == 200)
        #expect(await eventually { receiver.received.count >= 2 })
        let ended = try #require(try Self.body(receiver.received[1])["data"] as? [String: Any])
        #expect(ended["action"] as? String == "takeover.end" && ended["actor"] as? String == "loopback")
        #expect(receiver.received.count == 2, "the one started with no end is told when it is ended, once")
    }

    @Test func aFailedDeliveryIsRetriedUntilItIsTaken() async throws {
        let receiver = try WebhookReceiver { $0 < 2 ? 503 : 204 }
        defer { receiver.stop() }
        let service = try await Store.sqlite.start()
        let id = try await Self.hook(service, to: receiver, events: ["carousel.changed"])
        #expect(try await Self.patch(service, "/carousels/default", #"{"interval": 30}"#).status == 200)
        #expect(await eventually(within: 60) { receiver.received.count >= 3 })
        let received = receiver.received
        #expect(Set(received.map(\.body)).count == 1, "the same body each time")
        #expect(Set(received.map { $0.headers["x-carousel-delivery"] }).count == 1, "the same id: a receiver dedupes")
        var listed: [String: Any] = [:]
        #expect(
            await eventually(within: 30) {
                listed = (try? await Self.deliveries(service, of: id))?.first ?? [:]
                return listed["state"] as? String == "delivered"
            })
        #expect(listed["attempts"] as? Int == 3 && listed["nextAttemptAt"] is NSNull)
        #expect(listed["deliveredAt"] is String)
        // Each attempt, oldest first: two refusals, then the delivery.
        let log = try #require(listed["attemptLog"] as? [[String: Any]])
        #expect(log.map { $0["status"] as? Int } == [503, 503, 204])
        let times = log.compactMap { ($0["at"] as? String).flatMap(Timestamp.init(rfc3339:)) }
        #expect(
            times.count == 3 && times == times.sorted()
                && log.last?["at"] as? String == listed["deliveredAt"] as? String)
    }

    @Test func deliveriesOfAnUnknownWebhookAndBadLimitsAreRefused() async throws {
        let service = try await Transport.router.start()
        #expect(try await service.request("GET", "/webhooks/9/deliveries").status == 404)
        let created = try await WebhookAPITests.create(service, url: "https://93.184.216.34/hooks")
        let id = try #require(try created.json["id"] as? Int)
        for limit in ["0", "1001", "x"] {
            let refused = try await service.request("GET", "/webhooks/\(id)/deliveries?limit=\(limit)")
            #expect(refused.status == 400 && refused.problemDetail?.hasPrefix("limit") == true)
        }
        #expect(try await service.request("GET", "/webhooks/\(id)/deliveries?limit=5").json["deliveries"] is [Any])
    }
}

/// Screens' changes of state told to webhooks (docs/WEBHOOKS.md, docs/SCREENS.md).
@Suite("Webhook deliveries of screens")
struct ScreenWebhookTests {
    /// The events of `type` about screen `screen` the receiver got.
    static func events(_ receiver: WebhookReceiver, _ type: String, of screen: String) -> [[String: Any]] {
        receiver.received.filter { $0.headers["x-carousel-event"] == type }.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.body.utf8)) as? [String: Any]
        }.filter { ($0["data"] as? [String: Any])?["id"] as? String == screen }
    }

    /// Returns once `service`'s fleet has judged its screens once: what a process sees at its
    /// first judging is what it found, not a change (docs/SCREENS.md), and is not told.
    static func judgedOnce(_ service: LiveService) async throws {
        #expect(try await service.request("GET", "/banner?screen=probe").status == 200)
        #expect(
            await eventually {
                let listed = try? await service.request("GET", "/screens").json["screens"] as? [[String: Any]]
                return listed?.contains { $0["id"] as? String == "probe" } == true
            })
    }

    @Test func aScreenThatComesAndGoesIsToldOnlineThenOffline() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let live = try await LiveService(fleet: FleetSettings(screenTimeout: .seconds(1)), webhookAllowPrivate: true)
        _ = try await WebhookDeliveryTests.hook(live, to: receiver, events: ["screen.online", "screen.offline"])
        try await Self.judgedOnce(live)
        let screen = try HTTPConnection(port: live.port)
        #expect(try await screen.openStream("/banner/events?screen=wall-1").status == 200)
        #expect(await eventually { !Self.events(receiver, "screen.online", of: "wall-1").isEmpty })
        screen.hangUp()
        #expect(await eventually { !Self.events(receiver, "screen.offline", of: "wall-1").isEmpty })
        let online = try #require(Self.events(receiver, "screen.online", of: "wall-1").first?["data"] as? [String: Any])
        #expect(online["id"] as? String == "wall-1" && online["carousel"] as? String == "default")
        #expect(online["state"] as? String == "online" && online["via"] as? String == "stream")
        let offline = try #require(Self.events(receiver, "screen.offline", of: "wall-1").first)
        #expect((offline["data"] as? [String: Any])?["state"] as? String == "offline")
        #expect(offline["at"] as? String == (offline["data"] as? [String: Any])?["since"] as? String)
    }

    /// Both replicas judge the screen; each change is queued once (the same id from the rows).
    @Test func onPostgreSQLAScreensChangeIsToldOnceThoughEveryReplicaJudgesIt() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let uri = try await PostgresServer.shared().createDatabase()
        let fleet = FleetSettings(screenTimeout: .seconds(1))
        let first = try await LiveService(store: .postgres(uri: uri), fleet: fleet, webhookAllowPrivate: true)
        let second = try await LiveService(store: .postgres(uri: uri), fleet: fleet, webhookAllowPrivate: true)
        let id = try await WebhookDeliveryTests.hook(first, to: receiver, events: ["screen.online", "screen.offline"])
        try await Self.judgedOnce(first)
        try await Self.judgedOnce(second)
        // Heard (polling) until it is told online: however loaded the machine, it is online a while.
        #expect(
            await eventually {
                _ = try? await first.request("GET", "/banner?screen=kiosk-9")
                return !Self.events(receiver, "screen.online", of: "kiosk-9").isEmpty
            })
        func state(on service: LiveService) async -> String? {
            let listed = try? await service.request("GET", "/screens").json["screens"] as? [[String: Any]]
            return listed?.first { $0["id"] as? String == "kiosk-9" }?["state"] as? String
        }
        #expect(
            await eventually {
                let states = [await state(on: first), await state(on: second)]
                return states == ["offline", "offline"]
            })
        #expect(
            await eventually {
                let listed = (try? await WebhookDeliveryTests.deliveries(first, of: id)) ?? []
                return listed.count >= 2 && listed.allSatisfy { $0["state"] as? String == "delivered" }
                    && Self.events(receiver, "screen.offline", of: "kiosk-9").count >= 1
            })
        // Each change told once: one event per state and instant it began. (On a machine loaded
        // enough that one replica reads the screen's row before the other wrote its latest
        // sighting, it may flap offline and back: those are changes of their own.)
        for type in ["screen.online", "screen.offline"] {
            let told = Self.events(receiver, type, of: "kiosk-9").map { "\($0["at"] ?? "")" }
            #expect(!told.isEmpty && told.count == Set(told).count, "\(type): \(told)")
        }
    }
}
