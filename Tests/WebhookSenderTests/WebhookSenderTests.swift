import Store
import TestSupport
import Testing
import TimeZones
import WebhookSender

/// One attempt of a delivery against a real receiver on 127.0.0.1 (docs/WEBHOOKS.md): the POST,
/// its headers and signature (checked by Python's hmac), what counts as delivered, and the
/// addresses it refuses to connect to.
@Suite("Webhook sender")
struct WebhookSenderTests {
    static let secret = "whsec-0123456789abcdef"

    static func delivery(to url: String) -> DueDelivery {
        DueDelivery(
            number: 7, webhook: 3, event: "5f0c2a1e-7d7a-4c1e-9a39-6a3f1b2c4d5e", type: "carousel.changed",
            body:
                #"{"id":"5f0c2a1e-7d7a-4c1e-9a39-6a3f1b2c4d5e","type":"carousel.changed","data":{"carousel":"lobby ✿"}}"#,
            createdAt: Timestamp(secondsSinceEpoch: 1_795_982_400), attempts: 0, url: url, secret: secret)
    }

    @Test func aDeliveryIsPostedSignedWithItsEventAndID() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let delivery = Self.delivery(to: "http://127.0.0.1:\(receiver.port)/hooks/carousel?team=web")
        let attempt = WebhookSender(allowPrivate: true).send(delivery)
        #expect(attempt.status == 204 && attempt.error == nil && attempt.delivered)
        let received = try #require(receiver.received.first)
        #expect(receiver.received.count == 1)
        #expect(received.method == "POST" && received.target == "/hooks/carousel?team=web")
        #expect(received.body == delivery.body, "the body as queued, byte for byte")
        #expect(received.headers["content-type"] == "application/json")
        #expect(received.headers["x-carousel-event"] == "carousel.changed")
        #expect(received.headers["x-carousel-delivery"] == delivery.event)
        #expect(
            try await signatureHolds(received.headers["x-carousel-signature"], secret: Self.secret, body: delivery.body)
        )
        #expect(
            try await !signatureHolds(
                received.headers["x-carousel-signature"], secret: "another secret", body: delivery.body),
            "the check can fail")
    }

    @Test func theSignatureIsTheDocumentedOne() async throws {
        let signature = WebhookSender.signature(secret: Self.secret, at: 1_795_982_400, body: "{}")
        #expect(signature == "t=1795982400,v1=" + (try await pythonHMAC(key: Self.secret, message: "1795982400.{}")))
    }

    @Test(arguments: [500, 302, 404, 100_000])
    func anythingButA2xxIsNotADelivery(_ status: Int) async throws {
        let answered = status == 100_000 ? 200 : status
        let receiver = try WebhookReceiver { _ in answered }
        defer { receiver.stop() }
        let attempt = WebhookSender(allowPrivate: true).send(Self.delivery(to: "http://127.0.0.1:\(receiver.port)/"))
        #expect(attempt.status == answered && attempt.delivered == (answered == 200))
        #expect(receiver.received.count == 1, "a redirect is not followed")
    }

    @Test func aReceiverThatIsNotThereOrDoesNotAnswerIsAFailureThatSaysSo() async throws {
        let gone = try WebhookReceiver()
        gone.stop()
        let refused = WebhookSender(allowPrivate: true).send(Self.delivery(to: "http://127.0.0.1:\(gone.port)/"))
        #expect(refused.status == nil && !refused.delivered)
        #expect(refused.error?.contains("127.0.0.1") == true || refused.error?.contains("onnect") == true)

        let silent = try WebhookReceiver { _ in nil }
        defer { silent.stop() }
        let sender = WebhookSender(allowPrivate: true, timeout: .seconds(1))
        let attempt = sender.send(Self.delivery(to: "http://127.0.0.1:\(silent.port)/"))
        #expect(attempt.status == nil && attempt.error == "no answer within 1 s")
        #expect(silent.received.count == 1)
    }

    /// The check made as curl connects: what a name leads to now is what counts.
    @Test(arguments: ["127.0.0.1", "localhost"])
    func aPrivateAddressIsRefusedAsItIsConnectedTo(_ host: String) async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let attempt = WebhookSender(allowPrivate: false).send(Self.delivery(to: "http://\(host):\(receiver.port)/"))
        #expect(attempt.status == nil && !attempt.delivered)
        #expect(attempt.error?.contains("refused to connect to") == true, "\(attempt.error ?? "")")
        #expect(attempt.error?.contains("loopback") == true)
        #expect(receiver.received.isEmpty, "nothing reached it")
    }

    @Test func onlyHTTPAndHTTPSAreSpoken() {
        let attempt = WebhookSender(allowPrivate: true).send(Self.delivery(to: "file:///etc/passwd"))
        #expect(attempt.status == nil && attempt.error != nil)
    }
}
