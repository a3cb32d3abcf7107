import Foundation
import TestSupport
import Testing

/// Webhook deliveries across processes (docs/WEBHOOKS.md): queued with the write that caused
/// them, so `kill -9` with the receiver down loses none; on PostgreSQL each event reaches the
/// receiver once whichever replica made the write.
@Suite("Webhook deliveries, across processes")
struct WebhookProcessTests {
    static let secret = "0123456789abcdef-secret"
    static let environment = ["CAROUSEL_WEBHOOK_ALLOW_PRIVATE": "true"]

    static func hook(_ port: Int, to receiverPort: Int) async throws -> Int {
        let body =
            #"{"url": "http://127.0.0.1:\#(receiverPort)/hooks", "events": ["carousel.changed"], "secret": "\#(secret)"}"#
        let created = try await httpRequest(
            port: port, "POST", "/webhooks", headers: [("Content-Type", "application/json")], body: Array(body.utf8))
        #expect(created.status == 201, "\(created.text)")
        return try #require(try created.json["id"] as? Int)
    }

    static func patch(_ port: Int, interval: Int) async throws {
        let patched = try await httpRequest(
            port: port, "PATCH", "/carousels/default", headers: [("Content-Type", "application/merge-patch+json")],
            body: Array(#"{"interval": \#(interval)}"#.utf8))
        #expect(patched.status == 200, "\(patched.text)")
    }

    static func deliveries(_ port: Int, of id: Int) async throws -> [[String: Any]] {
        try #require(
            try await httpRequest(port: port, "GET", "/webhooks/\(id)/deliveries").json["deliveries"]
                as? [[String: Any]])
    }

    /// The revisions the received deliveries tell of, each checked as a receiver would.
    static func revisions(_ received: [WebhookReceiver.Received]) async throws -> [Int] {
        var revisions: [Int] = []
        for request in received {
            #expect(
                try await signatureHolds(request.headers["x-carousel-signature"], secret: secret, body: request.body))
            let body = try #require(try JSONSerialization.jsonObject(with: Data(request.body.utf8)) as? [String: Any])
            #expect(body["id"] as? String == request.headers["x-carousel-delivery"])
            revisions.append(try #require((body["data"] as? [String: Any])?["revision"] as? Int))
        }
        return revisions
    }

    @Test func killNineWithTheReceiverDownLosesNoDelivery() async throws {
        let directory = try ProofOfPlayProcessTests.workingDirectory()
        let receiverPort = try freeLoopbackPort()  // nothing listens there yet
        let first = try ServerProcess(arguments: [], environment: Self.environment, workingDirectory: directory)
        var port = try await first.waitForPort()
        let id = try await Self.hook(port, to: receiverPort)
        for interval in 2...6 { try await Self.patch(port, interval: interval) }
        // Each tried once and refused: waiting in the store for its next attempt.
        #expect(
            await eventually {
                let listed = (try? await Self.deliveries(port, of: id)) ?? []
                return listed.count == 5
                    && listed.allSatisfy { ($0["attempts"] as? Int ?? 0) >= 1 && $0["state"] as? String == "pending" }
            })
        first.signal(SIGKILL)
        _ = await first.waitForExit(seconds: 5)

        let receiver = try WebhookReceiver(port: receiverPort)
        defer { receiver.stop() }
        let second = try ServerProcess(arguments: [], environment: Self.environment, workingDirectory: directory)
        port = try await second.waitForPort()
        #expect(await eventually(within: 60) { Set(receiver.received.map(\.body)).count == 5 })
        #expect(try await Set(Self.revisions(receiver.received)) == [2, 3, 4, 5, 6], "every change told")
        second.signal(SIGTERM)
        #expect(await second.waitForExit(seconds: 15) == 0)
    }

    @Test func onPostgreSQLEachEventIsDeliveredOnceWhicheverReplicaMadeIt() async throws {
        let uri = try await PostgresServer.shared().createDatabase()
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let replicas = try [0, 1].map { _ in
            try ServerProcess(
                arguments: ["--store", uri], environment: Self.environment,
                workingDirectory: ProofOfPlayProcessTests.workingDirectory())
        }
        var ports: [Int] = []
        for replica in replicas { ports.append(try await replica.waitForPort()) }
        let id = try await Self.hook(ports[0], to: receiver.port)
        for interval in 2...11 { try await Self.patch(ports[interval % 2], interval: interval) }
        #expect(
            await eventually(within: 60) {
                let listed = (try? await Self.deliveries(ports[1], of: id)) ?? []
                return listed.count == 10 && listed.allSatisfy { $0["state"] as? String == "delivered" }
            })
        let received = receiver.received
        #expect(received.count == 10, "once each")
        #expect(try await Set(Self.revisions(received)) == Set(2...11))
        for replica in replicas {
            replica.signal(SIGTERM)
            #expect(await replica.waitForExit(seconds: 15) == 0)
        }
    }
}
