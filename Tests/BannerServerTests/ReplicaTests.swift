import Foundation
import TestSupport
import Testing

/// Several `banner-server` processes sharing one PostgreSQL database, as behind a load balancer
/// (docs/STORE.md, several replicas): a real PostgreSQL started by the tests, real processes.
@Suite("Replicas on PostgreSQL")
struct ReplicaTests {
    /// A replica on `uri`, in a folder of its own with the usual two-banner, paused configuration.
    static func replica(_ uri: String, environment: [String: String] = [:]) throws -> ServerProcess {
        try ServerProcess(
            arguments: ["--store", uri], environment: environment,
            workingDirectory: StoreProcessTests.workingDirectory())
    }

    /// `count` replicas on a fresh database, and their ports.
    static func replicas(_ count: Int, on server: PostgresServer) async throws -> ([ServerProcess], [Int]) {
        let uri = try await server.createDatabase()
        var processes: [ServerProcess] = []
        var ports: [Int] = []
        for _ in 0..<count {
            let process = try replica(uri)
            processes.append(process)
            ports.append(try await process.waitForPort())
        }
        return (processes, ports)
    }

    static func state(_ port: Int, _ path: String = "/banner") async throws -> (
        version: Int, etag: String?, body: String
    ) {
        let response = try await httpRequest(port: port, "GET", path)
        return ((try? response.json["version"] as? Int) ?? -1, response.header("ETag"), response.text)
    }

    /// True once every replica answers the same bytes and ETag for `path`.
    static func converged(_ ports: [Int], _ path: String = "/banner") async throws -> Bool {
        let states = try await ports.asyncMap { try await state($0, path) }
        return Set(states.map(\.body)).count == 1 && Set(states.map(\.etag)).count == 1
    }

    @Test func commandsSentToRandomReplicasAreNeverLostAndEveryReplicaConverges() async throws {
        let server = try await PostgresServer.shared()
        let (processes, ports) = try await Self.replicas(3, on: server)
        let start = try await Self.state(ports[0]).version
        let acknowledged = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var count = 0
                    for _ in 0..<25 {
                        let response = try await httpRequest(port: ports.randomElement()!, "POST", "/banner/next")
                        if response.status == 200 { count += 1 }
                    }
                    return count
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(acknowledged == 100)
        #expect(
            try await eventually { try await Self.converged(ports) },
            "every replica shows the same state, version and ETag")
        let versions = try await ports.asyncMap { try await Self.state($0).version }
        #expect(versions == Array(repeating: start + 100, count: 3), "each of the 100 moves counted once")
        // Each acknowledged move has its audit entry, whichever replica and write path took it
        // (the one-statement write, the transaction, group commit), and every replica reads one log.
        let logs = try await ports.asyncMap { try await httpRequest(port: $0, "GET", "/audit?actor=anonymous").text }
        #expect(Set(logs).count == 1)
        let entries = try await httpRequest(port: ports[1], "GET", "/audit?actor=anonymous").json["entries"]
        let moves = (entries as? [[String: Any]] ?? []).filter { $0["action"] as? String == "command.next" }
        #expect(moves.count == 100)
        #expect(Set(moves.compactMap { $0["requestId"] as? String }).count == 100, "each with its own request's id")
        _ = processes
    }

    /// The turn of a weighted cycle is in the notification and the row (docs/WEIGHTS.md): moves made
    /// on either replica continue the same cycle, a a b a c a a, and both show the same state.
    @Test func replicasFollowOneWeightedCycle() async throws {
        let server = try await PostgresServer.shared()
        let (processes, ports) = try await Self.replicas(2, on: server)
        let created = try await StoreProcessTests.json(ports[0], "POST", "/carousels", WeightedShop.body)
        #expect(created.status == 201)
        #expect(
            try await eventually {
                try await httpRequest(port: ports[1], "GET", "/carousels/shop/banner").status == 200
            })
        var shown: [String?] = []
        for move in 0..<4 {
            let moved = try await httpRequest(port: ports[move % 2], "POST", "/carousels/shop/banner/next").json
            shown.append((moved["banner"] as? [String: Any])?["id"] as? String)
        }
        // Turns 0 → 2 (b) → 3 (a) → 4 (c) → 5 (a): each next shows another banner.
        #expect(shown == ["b", "a", "c", "a"])
        #expect(try await eventually { try await Self.converged(ports, "/carousels/shop/banner") })
        let state = try await httpRequest(port: ports[1], "GET", "/carousels/shop/banner").json
        #expect((state["next"] as? [String: Any])?["id"] as? String == "a", "turn 5's next is turn 6, a again")
        #expect((state["previous"] as? [String: Any])?["id"] as? String == "c")
        _ = processes
    }

    /// Every audience's state (docs/AUDIENCES.md) is the same on every replica, whichever replica
    /// took each command or edit: each audience's anchor goes through the row.
    @Test func replicasAgreeOnEveryAudience() async throws {
        let server = try await PostgresServer.shared()
        let (processes, ports) = try await Self.replicas(2, on: server)
        #expect(try await StoreProcessTests.json(ports[0], "POST", "/carousels", AudienceShop.body).status == 201)
        let audiences = ["", "?audience=de", "?audience=fr", "?audience=store-berlin", "?audience=it"]
        func agree() async throws -> Bool {
            try await eventually {
                for query in audiences where !(try await Self.converged(ports, "/carousels/shop/banner\(query)")) {
                    return false
                }
                return true
            }
        }
        #expect(try await agree())
        #expect(try await httpRequest(port: ports[0], "POST", "/carousels/shop/banner/next").status == 200)
        #expect(try await httpRequest(port: ports[1], "POST", "/carousels/shop/banner/next").status == 200)
        #expect(try await agree())
        let german = try await httpRequest(port: ports[0], "GET", "/carousels/shop/banner?audience=de").json
        #expect((german["banner"] as? [String: Any])?["id"] as? String == "d", "a b d: two steps on from a")
        let jumped = try await StoreProcessTests.json(
            ports[1], "PUT", "/carousels/shop/banner/index?audience=fr", #"{"index": 1}"#)
        #expect(jumped.status == 200)
        #expect(try await agree())
        let patched = try await StoreProcessTests.json(
            ports[0], "PATCH", "/carousels/shop/banners/c", #"{"audiences": ["fr", "it"]}"#)
        #expect(patched.status == 200)
        #expect(try await agree())
        let italian = try await httpRequest(port: ports[1], "GET", "/carousels/shop/banner?audience=it").json
        #expect(italian["count"] as? Int == 2, "it now has a and c, on the replica that did not make the edit")
        _ = processes
    }

    /// Each replica's `GET /screens`, by screen id.
    static func screens(_ port: Int) async throws -> [String: [String: Any]] {
        let entries = try await httpRequest(port: port, "GET", "/screens").json["screens"] as? [[String: Any]] ?? []
        return Dictionary(uniqueKeysWithValues: entries.map { ($0["id"] as! String, $0) })
    }

    /// The fleet across replicas (docs/SCREENS.md): what one replica hears, every replica lists,
    /// with the same state since the same instant.
    @Test func aScreenHeardByOneReplicaIsListedByEveryReplica() async throws {
        let server = try await PostgresServer.shared()
        let uri = try await server.createDatabase()
        let processes = try (0..<2).map { _ in try Self.replica(uri, environment: ["CAROUSEL_SCREEN_TIMEOUT": "3"]) }
        let ports = try await processes.asyncMap { try await $0.waitForPort() }
        let screen = try HTTPConnection(port: ports[1])
        #expect(try await screen.openStream("/banner/events", headers: [("X-Screen-Id", "wall-1")]).status == 200)
        #expect(try await eventually { try await Self.screens(ports[0])["wall-1"]?["state"] as? String == "online" })
        #expect(try await Self.screens(ports[0])["wall-1"]?["via"] as? String == "stream")
        // Its stream stays held while the receipt goes round, longer than the 3 s timeout: heard all
        // the while by the replica holding it, so judged by its receipt, not offline.
        let version = try await Self.state(ports[0]).version
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let receipt =
            #"{"receipts": [{"version": \#(version), "banner": "a", "shownAt": "\#(formatter.string(from: Date()))"}]}"#
        let taken = try await StoreProcessTests.json(
            ports[0], "POST", "/carousels/default/screens/wall-1/receipts", receipt)
        #expect(taken.status == 204, "\(taken.text)")
        #expect(
            try await eventually {
                let listed = try await ports.asyncMap { try await Self.screens($0)["wall-1"] }
                // The carousel is paused on `a` since it started: a flip to it now is late.
                return listed.allSatisfy {
                    ($0?["shown"] as? [String: Any])?["banner"] as? String == "a" && $0?["reason"] as? String == "late"
                }
            }, "the receipt taken by one replica is the screen's on both")
        screen.hangUp()
        var offline: [[String: Any]?] = []
        #expect(
            try await eventually {
                offline = try await ports.asyncMap { try await Self.screens($0)["wall-1"] }
                return offline.allSatisfy { $0?["state"] as? String == "offline" }
            })
        #expect(offline[0]?["since"] as? String == offline[1]?["since"] as? String, "the same instant on both")
        _ = processes
    }

    @Test func anAdminChangeOnOneReplicaReachesSubscribersOfAnother() async throws {
        let server = try await PostgresServer.shared()
        let (processes, ports) = try await Self.replicas(2, on: server)
        let connection = try HTTPConnection(port: ports[1])
        #expect(try await connection.openStream("/banner/events").status == 200)
        let events = EventStreamReader(connection)
        let first = try #require(try await events.nextEvent())
        let added = try await StoreProcessTests.json(
            ports[0], "POST", "/carousels/default/banners", #"{"id": "c", "image": "https://cdn.example.com/c.png"}"#)
        #expect(added.status == 201)
        let next = try #require(try await events.nextEvent())
        #expect(next.id != first.id)
        #expect(next.data?.contains("\"count\":3") == true, "the subscriber of the other replica sees three banners")
        #expect(try await Self.state(ports[1], "/carousels/default/banners/c").body.contains("c.png"))
        #expect(try await eventually { try await Self.converged(ports) })
        _ = processes
    }

    /// A change scheduled on one replica (docs/SCHEDULED.md) is known to both, whose timers both
    /// fire at its time: the store lets one make it, once.
    @Test func aScheduledChangeIsMadeOnceThoughEveryReplicaKnowsIt() async throws {
        let server = try await PostgresServer.shared()
        let (processes, ports) = try await Self.replicas(2, on: server)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let at = formatter.string(from: Date().addingTimeInterval(15))
        let scheduled = try await StoreProcessTests.json(
            ports[0], "PATCH", "/carousels/default?at=\(at)", #"{"interval": 9}"#)
        #expect(scheduled.status == 202)
        for port in ports {
            #expect(
                await eventually {
                    (try? await httpRequest(port: port, "GET", "/carousels/default").json["interval"] as? Double) == 9
                }, "made, as every replica shows")
        }
        let made = try await httpRequest(port: ports[1], "GET", "/audit").json["entries"] as? [[String: Any]]
        #expect((made ?? []).filter { $0["action"] as? String == "carousel.patch" }.count == 1, "made once")
        #expect(try await httpRequest(port: ports[0], "GET", "/carousels/default").json["revision"] as? Int == 2)
        #expect(
            try await httpRequest(port: ports[1], "GET", "/carousels/default/pending").text.contains("\"pending\":[]"))
        _ = processes
    }

    /// The media library (docs/MEDIA.md) is in the database: an image uploaded to one replica is
    /// served by every replica byte for byte, a banner of another replica may show it (with its
    /// variants), and the same file sent to both at once is one image.
    @Test func anImageUploadedToOneReplicaIsServedByEveryReplica() async throws {
        let server = try await PostgresServer.shared()
        let (processes, ports) = try await Self.replicas(2, on: server)
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../MediaTests/Fixtures").standardized
        let jpeg = Array(try Data(contentsOf: fixtures.appendingPathComponent("wide.jpg")))
        let uploaded = try await HTTPConnection(port: ports[0], timeoutSeconds: 60).send(
            "POST", "/media", headers: [("Content-Type", "image/jpeg")], body: jpeg)
        #expect(uploaded.status == 201)
        let id = try #require(try uploaded.json["id"] as? String)
        for path in ["/media/\(id)", "/media/\(id)/480.webp", "/media/\(id)/960.webp"] {
            let answers = try await ports.asyncMap { try await httpRequest(port: $0, "GET", path) }
            #expect(answers.map(\.status) == [200, 200], "\(path)")
            #expect(answers[0].body == answers[1].body && !answers[0].body.isEmpty, "\(path): the same bytes")
            #expect(answers[0].header("ETag") == answers[1].header("ETag"))
        }
        let added = try await StoreProcessTests.json(
            ports[1], "POST", "/carousels/default/banners", #"{"id": "photo", "image": "/media/\#(id)"}"#)
        #expect(added.status == 201)
        #expect(try await eventually { try await Self.converged(ports, "/banners") })
        #expect(try await Self.state(ports[0], "/banners").body.contains("/media/\(id)/960.webp 960w"))
        let refused = try await httpRequest(port: ports[0], "DELETE", "/media/\(id)")
        #expect(refused.status == 409, "a banner stored by the other replica shows it")

        let png = Array(try Data(contentsOf: fixtures.appendingPathComponent("quadrant.png")))
        async let first = HTTPConnection(port: ports[0], timeoutSeconds: 60).send(
            "POST", "/media", headers: [("Content-Type", "image/png")], body: png)
        async let second = HTTPConnection(port: ports[1], timeoutSeconds: 60).send(
            "POST", "/media", headers: [("Content-Type", "image/png")], body: png)
        let both = try await [first, second]
        #expect(Set(both.map(\.status)).isSubset(of: [200, 201]) && both.contains { $0.status == 201 })
        let listed = try await httpRequest(port: ports[1], "GET", "/media").json["media"] as? [[String: Any]]
        #expect(listed?.count == 2)

        // Deleted on one replica while the other still has it in its index: a banner write there
        // that brings it in passes the index's check, and the store's own check in the write's
        // transaction refuses it; nothing changed on either replica.
        let pngID = try #require(try both[0].json["id"] as? String)
        #expect(try await httpRequest(port: ports[1], "DELETE", "/media/\(pngID)").status == 204)
        let late = try await StoreProcessTests.json(
            ports[0], "POST", "/carousels/default/banners", #"{"id": "late", "image": "/media/\#(pngID)"}"#)
        #expect(late.status == 422)
        #expect(late.text.contains("no image \(pngID) (deleted while this change was made)"), "\(late.text)")
        for port in ports {
            #expect(try await !httpRequest(port: port, "GET", "/carousels/default").text.contains("\"late\""))
        }
        _ = processes
    }

    /// A takeover started on one replica holds the screens of every replica (its notification
    /// names only the carousel: the others read the row), and ending it elsewhere ends it everywhere.
    @Test func aTakeoverOnOneReplicaHoldsEveryReplicaUntilEndedOnAnother() async throws {
        let server = try await PostgresServer.shared()
        let (processes, ports) = try await Self.replicas(2, on: server)
        let connection = try HTTPConnection(port: ports[1])
        #expect(try await connection.openStream("/banner/events").status == 200)
        let events = EventStreamReader(connection)
        _ = try #require(try await events.nextEvent())
        let started = try await StoreProcessTests.json(
            ports[0], "POST", "/carousels/default/takeover",
            #"{"banner": {"id": "alert", "image": "https://cdn.example.com/alert.png"}, "seconds": 3600}"#)
        #expect(started.status == 200)
        let held = try #require(try await events.nextEvent())
        #expect(held.data?.contains(#""takeover":{"banner":"alert","#) == true, "the other replica's subscriber")
        #expect(try await httpRequest(port: ports[1], "POST", "/banner/next").status == 409)
        let ended = try await httpRequest(port: ports[1], "DELETE", "/carousels/default/takeover")
        #expect(ended.status == 200)
        #expect(
            try await eventually { try await Self.state(ports[0]).body.contains(#""takeover":null"#) },
            "ended on the other replica, ended here")
        #expect(try await eventually { try await Self.converged(ports) })
        _ = processes
    }

    /// A token created on one replica works on the other; revoked there, it is refused by both
    /// (docs/TOKENS.md): the deletion notifies, each replica reads the tokens again.
    @Test func aTokenRevokedOnOneReplicaIsRefusedByEveryReplica() async throws {
        let uri = try await PostgresServer.shared().createDatabase()
        let environment = ["CAROUSEL_CONTROL_TOKEN": "env-control-token"]
        let processes = try (0..<2).map { _ in try Self.replica(uri, environment: environment) }
        var ports: [Int] = []
        for process in processes { ports.append(try await process.waitForPort()) }
        let created = try await StoreProcessTests.json(
            ports[0], "POST", "/tokens", #"{"name": "kiosk", "role": "control"}"#)
        #expect(created.status == 201)
        let secret = try #require(try created.json["secret"] as? String)
        let next = { (port: Int) async throws -> Int in
            try await httpRequest(
                port: port, "POST", "/banner/next", headers: [("Authorization", "Bearer \(secret)")]
            ).status
        }
        #expect(try await eventually { try await next(ports[1]) == 200 }, "the other replica heard of it")
        #expect(try await httpRequest(port: ports[1], "POST", "/banner/next").status == 401, "commands need a token")

        #expect(try await httpRequest(port: ports[0], "DELETE", "/tokens/kiosk").status == 204)
        #expect(try await next(ports[0]) == 401, "refused at once where it was revoked")
        #expect(try await eventually { try await next(ports[1]) == 401 }, "and by the other replica")
        _ = processes
    }

    @Test func twoReplicasRacingWithTheSameIfMatchGiveOne200AndOne412() async throws {
        let server = try await PostgresServer.shared()
        let (processes, ports) = try await Self.replicas(2, on: server)
        let tag = try #require(try await httpRequest(port: ports[0], "GET", "/carousels/default").header("ETag"))
        #expect(try await httpRequest(port: ports[1], "GET", "/carousels/default").header("ETag") == tag)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for (port, interval) in zip(ports, [7, 9]) {
                group.addTask {
                    try await httpRequest(
                        port: port, "PATCH", "/carousels/default",
                        headers: [("Content-Type", "application/merge-patch+json"), ("If-Match", tag)],
                        body: Array(#"{"interval": \#(interval)}"#.utf8)
                    ).status
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }.sorted()
        }
        #expect(statuses == [200, 412])
        _ = processes
    }

    /// Three replicas started at once on an empty database: it is migrated and seeded once.
    @Test func replicasStartingTogetherMigrateAndSeedOnce() async throws {
        let uri = try await PostgresServer.shared().createDatabase()
        let processes = try (0..<3).map { _ in try Self.replica(uri) }
        var ports: [Int] = []
        for process in processes { ports.append(try await process.waitForPort()) }
        for port in ports {
            #expect(try await eventually { try await httpRequest(port: port, "GET", "/readyz").status == 200 })
        }
        let seeded = processes.filter { $0.standardError.contains("was empty: seeded it") }
        #expect(seeded.count == 1, "\(processes.map(\.standardError))")
        let definition = try await httpRequest(port: ports[2], "GET", "/carousels/default")
        #expect(try definition.json["revision"] as? Int == 1, "seeded once, not replaced by the others")
        #expect(try await Self.converged(ports))
    }

    @Test func aMalformedURIStopsTheReplicaWithExit2() async throws {
        let process = try Self.replica("postgres://banner@127.0.0.1/carousels?no_such_option=1")
        #expect(await process.waitForExit(seconds: 10) == 2)
        #expect(process.standardError.contains("the PostgreSQL URI is malformed"), "\(process.standardError)")
    }

    @Test func aDatabaseOfANewerSchemaStopsTheReplicaWithExit2NamingBothVersions() async throws {
        let server = try await PostgresServer.shared()
        let uri = try await server.createDatabase()
        let first = try Self.replica(uri)
        _ = try await first.waitForPort()
        first.signal(SIGTERM)
        #expect(await first.waitForExit(seconds: 10) == 0)
        let database = PostgresServer.database(in: uri)
        try await server.psql("UPDATE banner_store SET value = '99' WHERE key = 'schema_version'", database: database)
        let newer = try Self.replica(uri)
        #expect(await newer.waitForExit(seconds: 10) == 2)
        #expect(newer.standardError.contains("has schema version 99, newer than this banner-server's"))
    }

    @Test func aReplicaKilledWithNineLeavesTheOthersServing() async throws {
        let server = try await PostgresServer.shared()
        let (processes, ports) = try await Self.replicas(3, on: server)
        processes[0].signal(SIGKILL)
        #expect(await processes[0].waitForExit(seconds: 5) == 128 + SIGKILL)
        let moved = try await httpRequest(port: ports[1], "POST", "/banner/next")
        #expect(moved.status == 200)
        let version = try moved.json["version"] as? Int
        #expect(try await eventually { try await Self.state(ports[2]).version == version })
    }
}

/// PostgreSQL stopped and started again under the replicas: each test has a server of its own.
@Suite("Replicas when PostgreSQL goes away")
struct DatabaseOutageTests {
    @Test func readsGoOnWritesAre503AndEverythingComesBackWithNoAcknowledgedWriteMissing() async throws {
        let server = try await PostgresServer.launch()
        let (processes, ports) = try await ReplicaTests.replicas(2, on: server)
        // Ready once its listener has connected too, a moment after it listens.
        #expect(try await eventually { try await httpRequest(port: ports[0], "GET", "/readyz").status == 200 })
        let start = try await ReplicaTests.state(ports[0]).version
        let load = Task { () -> Int in
            var acknowledged = 0
            while !Task.isCancelled {
                if let response = try? await httpRequest(port: ports.randomElement()!, "POST", "/banner/next"),
                    response.status == 200
                {
                    acknowledged += 1
                }
            }
            return acknowledged
        }
        #expect(try await eventually { try await ReplicaTests.state(ports[0]).version > start + 5 })
        try await server.stop()
        for port in ports {
            #expect(
                try await eventually { try await httpRequest(port: port, "GET", "/readyz").status == 503 },
                "\(processes.map(\.standardError))")
            #expect(try await httpRequest(port: port, "GET", "/healthz").status == 200, "the process is alive")
            #expect(try await httpRequest(port: port, "GET", "/banner").status == 200, "reads go on from memory")
            let refused = try await httpRequest(port: port, "POST", "/banner/next")
            #expect(refused.status == 503 && refused.header("Retry-After") != nil)
            #expect(refused.text.contains("cannot be reached"), "\(refused.text)")
        }
        #expect(
            await processes[0].standardErrorShows("Reads go on from memory"), "the operator is told, once per outage")
        try await server.start()
        for (process, port) in zip(processes, ports) {
            #expect(try await eventually { try await httpRequest(port: port, "GET", "/readyz").status == 200 })
            #expect(await process.standardErrorShows("is reachable again: reloading every carousel"))
        }
        #expect(try await eventually { try await ReplicaTests.state(ports[0]).version > start + 10 + 0 })
        load.cancel()
        let acknowledged = await load.value
        #expect(try await eventually { try await ReplicaTests.converged(ports) })
        let final = try await ReplicaTests.state(ports[0]).version
        #expect(final == start + acknowledged, "every acknowledged move is there, and nothing else")
    }

    @Test func aReplicaStartedWhileTheDatabaseIsDownWaitsForIt() async throws {
        let server = try await PostgresServer.launch()
        let uri = try await server.createDatabase()
        try await server.stop()
        let process = try ReplicaTests.replica(uri)
        let port = try await process.waitForPort()
        #expect(await process.standardErrorShows("Waiting for it"))
        let notReady = try await httpRequest(port: port, "GET", "/readyz")
        #expect(notReady.status == 503 && notReady.text.contains("cannot be reached"))
        #expect(try await httpRequest(port: port, "GET", "/banner").status == 404, "nothing loaded yet")
        try await server.start()
        #expect(try await eventually { try await httpRequest(port: port, "GET", "/readyz").status == 200 })
        #expect(await process.standardErrorShows("was empty: seeded it with carousel default"))
        #expect(try await httpRequest(port: port, "GET", "/banner").status == 200)
    }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}

/// a, b and c weighted 5, 1, 1 (docs/WEIGHTS.md): the cycle is a a b a c a a.
enum WeightedShop {
    static let body = #"""
        {"name": "shop", "interval": 3600, "banners": [
          {"id": "a", "image": "https://cdn.example.com/a.png", "weight": 5},
          {"id": "b", "image": "https://cdn.example.com/b.png"},
          {"id": "c", "image": "https://cdn.example.com/c.png"}]}
        """#
}

/// a for everyone, b for de, c for fr, d for de and store-berlin (docs/AUDIENCES.md).
enum AudienceShop {
    static let body = #"""
        {"name": "shop", "interval": 3600, "banners": [
          {"id": "a", "image": "https://cdn.example.com/a.png"},
          {"id": "b", "image": "https://cdn.example.com/b.png", "audiences": ["de"]},
          {"id": "c", "image": "https://cdn.example.com/c.png", "audiences": ["fr"]},
          {"id": "d", "image": "https://cdn.example.com/d.png", "audiences": ["de", "store-berlin"]}]}
        """#
}
