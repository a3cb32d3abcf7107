import BannerService
import Foundation
import TestSupport
import Testing

/// A subscriber of `GET /banner/events` on its own connection.
func subscribe(_ live: LiveService, headers: [(String, String)] = []) async throws -> (HTTPResponse, EventStreamReader)
{
    let connection = try HTTPConnection(port: live.port)
    let head = try await connection.openStream("/banner/events", headers: headers)
    return (head, EventStreamReader(connection))
}

func stateOf(_ event: ServerSentEvent?) throws -> [String: Any] {
    let data = try #require(event?.data)
    return try #require(try JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any])
}

@Suite("Server-Sent Events")
struct EventStreamTests {
    @Test func theFirstEventIsTheCurrentState() async throws {
        let live = try await LiveService()
        _ = try await live.request("POST", "/banner/next")
        let (head, events) = try await subscribe(live)
        #expect(head.status == 200)
        #expect(head.header("Content-Type") == "text/event-stream; charset=utf-8")
        #expect(head.header("Cache-Control") == "no-cache")
        let first = try #require(try await events.nextEvent())
        #expect(first.retry == 2000)
        #expect(first.event == "state")
        #expect(first.id == "2")
        let current = try await live.request("GET", "/banner")
        #expect(first.data.map { $0 + "\n" } == current.text, "the same JSON as GET /banner")
    }

    @Test func everyCommandIsAnEventWithItsVersionAsId() async throws {
        let live = try await LiveService()
        let (_, events) = try await subscribe(live)
        _ = try await events.nextEvent()
        _ = try await live.request("POST", "/banner/next")
        _ = try await live.request(
            "PUT", "/banner/index", headers: [("Content-Type", "application/json")], body: #"{"index": 4}"#)
        _ = try await live.request("POST", "/banner/pause")
        let next = try await events.nextEvent()
        #expect(next?.id == "2")
        #expect(try stateOf(next)["index"] as? Int == 1)
        let jump = try await events.nextEvent()
        #expect(jump?.id == "3")
        #expect(try stateOf(jump)["index"] as? Int == 4)
        let pause = try await events.nextEvent()
        #expect(pause?.id == "4")
        #expect(try stateOf(pause)["paused"] as? Bool == true)
    }

    @Test func automaticAdvancesAreEventsToo() async throws {
        let live = try await LiveService(interval: .milliseconds(100))
        let (_, events) = try await subscribe(live)
        let first = try stateOf(try await events.nextEvent())
        var previous = first
        for _ in 0..<3 {
            let event = try await events.nextEvent()
            let state = try stateOf(event)
            #expect(event?.id == String(state["version"] as? Int ?? -1))
            // Usually one advance per event; a stalled machine catches up several in one.
            let gap = try timestamp(state["nextAdvanceAt"]).timeIntervalSince(try timestamp(previous["nextAdvanceAt"]))
            let advances = Int((gap / 0.1).rounded())
            #expect(advances >= 1)
            #expect(abs(gap - Double(advances) * 0.1) < 0.0015, "the schedule stays on whole intervals")
            #expect(state["index"] as? Int == ((previous["index"] as? Int ?? 0) + advances) % 5)
            previous = state
        }
    }

    @Test func heartbeatsKeepAnIdleStreamTalking() async throws {
        let live = try await LiveService(heartbeat: .milliseconds(50))
        let (_, events) = try await subscribe(live)
        _ = try await events.nextEvent()
        let heartbeat = try await events.next()
        #expect(heartbeat?.comments == ["heartbeat"])
        #expect(heartbeat?.data == nil)
    }

    @Test func threeHundredSubscribersAllReceiveAChange() async throws {
        let live = try await LiveService()
        var subscribers: [EventStreamReader] = []
        for _ in 0..<300 {
            let (_, events) = try await subscribe(live)
            subscribers.append(events)
        }
        for events in subscribers { #expect(try await events.nextEvent()?.id == "1") }
        #expect(await eventually { live.service.eventSubscribers == 300 })
        _ = try await live.request("POST", "/banner/next")
        try await withThrowingTaskGroup(of: String?.self) { group in
            for events in subscribers { group.addTask { try await events.nextEvent()?.id } }
            for try await id in group { #expect(id == "2") }
        }
    }

    @Test func subscribersThatHangUpAreReleasedAndLaterBroadcastsCarryOn() async throws {
        let live = try await LiveService(heartbeat: .milliseconds(50))
        var leaving: [EventStreamReader] = []
        for _ in 0..<20 {
            let (_, events) = try await subscribe(live)
            _ = try await events.nextEvent()
            leaving.append(events)
        }
        let (_, staying) = try await subscribe(live)
        _ = try await staying.nextEvent()
        #expect(await eventually { live.service.eventSubscribers == 21 })
        leaving.removeAll()  // closes their sockets
        #expect(await eventually { live.service.eventSubscribers == 1 }, "released by the next heartbeat")
        _ = try await live.request("POST", "/banner/next")
        _ = try await live.request("POST", "/banner/next")
        var ids: [String] = []
        while ids.count < 2, let event = try await staying.nextEvent() { ids.append(event.id ?? "") }
        #expect(ids == ["2", "3"])
    }

    @Test func stoppingTheServiceEndsEveryStream() async throws {
        let live = try await LiveService()
        var subscribers: [EventStreamReader] = []
        for _ in 0..<10 {
            let (_, events) = try await subscribe(live)
            _ = try await events.nextEvent()
            subscribers.append(events)
        }
        live.service.stop()
        for events in subscribers {
            let ended = try? await events.nextEvent()
            #expect(ended == nil)
        }
    }

    @Test func aStreamFromAnAllowedOriginCarriesCORSHeaders() async throws {
        let live = try await LiveService(corsOrigins: ["https://shop.example.com"])
        let (head, _) = try await subscribe(live, headers: [("Origin", "https://shop.example.com")])
        #expect(head.header("Access-Control-Allow-Origin") == "https://shop.example.com")
        let (stranger, _) = try await subscribe(live, headers: [("Origin", "https://evil.example")])
        #expect(stranger.header("Access-Control-Allow-Origin") == nil)
    }

    @Test func onlyGetOpensAStream() async throws {
        let live = try await LiveService()
        let response = try await live.request("POST", "/banner/events")
        #expect(response.status == 405)
        #expect(response.header("Allow") == "GET")
    }
}

@Suite("Conditional reads over HTTP")
struct LiveConditionalTests {
    @Test func aPollerGets304UntilTheCarouselMoves() async throws {
        let live = try await LiveService()
        let poller = try HTTPConnection(port: live.port)
        let first = try await poller.send("GET", "/banner")
        let etag = try #require(first.header("ETag"))
        let again = try await poller.send("GET", "/banner", headers: [("If-None-Match", etag)])
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
        #expect(again.header("Content-Length") == String(first.body.count), "the 200's length, never 0")
        #expect(try await poller.send("GET", "/banner").body == first.body, "no body bytes were left on the wire")
        _ = try await live.request("POST", "/banner/next")
        let moved = try await live.request("GET", "/banner", headers: [("If-None-Match", etag)])
        #expect(moved.status == 200)
        #expect(moved.header("ETag") != etag)
    }
}
