import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

/// The default store (`data/carousel.db` under the working directory) as an operator meets it:
/// real processes, real files, restarts and `kill -9` (docs/STORE.md).
@Suite("The store, across processes")
struct StoreProcessTests {
    /// A folder with `config/carousel.json` (by default two banners, paused), where
    /// `banner-server` runs.
    static func workingDirectory(configuration: String = pausedPair) throws -> URL {
        let directory = try temporaryDirectory()
        let config = directory.appendingPathComponent("config")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try configuration.write(to: config.appendingPathComponent("carousel.json"), atomically: true, encoding: .utf8)
        return directory
    }

    static let pausedPair = #"""
        {"host": "127.0.0.1", "port": 0, "interval": 3600, "autoplay": false,
         "banners": [{"id": "a", "image": "https://cdn.example.com/a.png"},
                     {"id": "b", "image": "https://cdn.example.com/b.png"}]}
        """#

    static func json(_ port: Int, _ method: String, _ path: String, _ body: String) async throws -> HTTPResponse {
        try await httpRequest(
            port: port, method, path, headers: [("Content-Type", "application/json")], body: Array(body.utf8))
    }

    @Test func aRestartKeepsEveryChangeAndThePosition() async throws {
        let directory = try Self.workingDirectory()
        let first = try ServerProcess(arguments: [], workingDirectory: directory)
        var port = try await first.waitForPort()
        #expect(await first.standardErrorShows("was empty: seeded it with carousel default from config/carousel.json"))
        let created = try await Self.json(port, "POST", "/carousels", #"{"name": "lobby", "autoplay": false}"#)
        #expect(created.status == 201)
        let added = try await Self.json(
            port, "POST", "/carousels/default/banners", #"{"id": "c", "image": "https://cdn.example.com/c.png"}"#)
        #expect(added.status == 201)
        let jumped = try await Self.json(port, "PUT", "/banner/index", #"{"index": 2}"#).json
        first.signal(SIGTERM)
        #expect(await first.waitForExit(seconds: 5) == 0)

        let second = try ServerProcess(arguments: [], workingDirectory: directory)
        port = try await second.waitForPort()
        let state = try await httpRequest(port: port, "GET", "/banner").json
        #expect((state["banner"] as? [String: Any])?["id"] as? String == "c")
        #expect(state["version"] as? Int == jumped["version"] as? Int, "version never goes backwards")
        #expect(try await httpRequest(port: port, "GET", "/carousels/lobby").status == 200)
        #expect(
            await second.standardErrorShows("config/carousel.json differs from SQLite store data/carousel.db"),
            "the store has moved on since the file seeded it; the operator is told, once")
        second.signal(SIGTERM)
        #expect(await second.waitForExit(seconds: 5) == 0)
    }

    /// Commands and admin writes from two clients; `kill -9` in the middle; every write that was
    /// answered 2xx is there after the restart.
    @Test func killNineLosesNoAcknowledgedWrite() async throws {
        let directory = try Self.workingDirectory()
        let server = try ServerProcess(arguments: [], workingDirectory: directory)
        let port = try await server.waitForPort()
        for number in 0..<3 {
            #expect(try await Self.json(port, "POST", "/carousels", #"{"name": "lobby-\#(number)"}"#).status == 201)
        }
        let commands = Task { () -> [Int] in
            var versions: [Int] = []
            while let response = try? await httpRequest(port: port, "POST", "/banner/next"), response.status == 200 {
                versions.append(try response.json["version"] as? Int ?? 0)
            }
            return versions
        }
        let admin = Task { () -> [String] in
            var ids: [String] = []
            for number in 0..<10_000 {
                let id = "added-\(number)"
                let body = #"{"id": "\#(id)", "image": "https://cdn.example.com/\#(number).png"}"#
                guard let response = try? await Self.json(port, "POST", "/carousels/lobby-\(number % 3)/banners", body)
                else { break }
                if response.status == 201 { ids.append(id) }
            }
            return ids
        }
        // Enough acknowledged writes of both kinds, then the kill, whatever is in flight.
        #expect(
            try await eventually(within: 60) {
                let carousels =
                    try await httpRequest(port: port, "GET", "/carousels").json["carousels"] as? [[String: Any]]
                let banners = carousels?.reduce(0) { $0 + ($1["count"] as? Int ?? 0) } ?? 0
                let version = try await httpRequest(port: port, "GET", "/banner").json["version"] as? Int
                return banners > 2 + 30 && (version ?? 0) > 50
            })
        server.signal(SIGKILL)
        #expect(await server.waitForExit(seconds: 10) == 128 + SIGKILL)
        let acknowledgedVersions = try await commands.value
        let acknowledgedBanners = await admin.value
        #expect(!acknowledgedVersions.isEmpty && !acknowledgedBanners.isEmpty)

        let restarted = try ServerProcess(arguments: [], workingDirectory: directory)
        let newPort = try await restarted.waitForPort()
        let state = try await httpRequest(port: newPort, "GET", "/banner").json
        let version = try #require(state["version"] as? Int)
        #expect(version >= acknowledgedVersions.max()!, "the last acknowledged command is there")
        var stored: Set<String> = []
        for name in ["lobby-0", "lobby-1", "lobby-2"] {
            let banners =
                try await httpRequest(port: newPort, "GET", "/carousels/\(name)").json["banners"] as? [[String: Any]]
            stored.formUnion(banners?.compactMap { $0["id"] as? String } ?? [])
        }
        #expect(Set(acknowledgedBanners).isSubset(of: stored))
        restarted.signal(SIGTERM)
        #expect(await restarted.waitForExit(seconds: 5) == 0)
    }

    /// A store file its process may not write (as root, the test runs the service as `nobody`,
    /// since root writes whatever the permissions say): reads are served, changes get 503.
    @Test func aReadOnlyStoreServesReadsAndRefusesChanges() async throws {
        let directory = try Self.workingDirectory()
        let seeding = try ServerProcess(arguments: [], workingDirectory: directory)
        _ = try await seeding.waitForPort()
        seeding.signal(SIGTERM)
        #expect(await seeding.waitForExit(seconds: 5) == 0)
        let data = directory.appendingPathComponent("data")
        let store = data.appendingPathComponent("carousel.db")
        var command = [ServerProcess.executable.path]
        var environment: [String: String] = [:]
        if getuid() == 0 {
            // nobody may not read the leak checker's suppression file (make test-sanitize), and
            // would fail at exit: leaks are checked in every other child.
            environment["ASAN_OPTIONS"] = "detect_leaks=0"
            let nobody: [FileAttributeKey: Any] = [.ownerAccountID: 65534, .groupOwnerAccountID: 65534]
            let files = try FileManager.default.contentsOfDirectory(atPath: data.path)
            for item in [data.path] + files.map({ data.appendingPathComponent($0).path }) {
                try FileManager.default.setAttributes(nobody, ofItemAtPath: item)
            }
            command = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + command
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: store.path)
        let server = try ServerProcess(
            executable: URL(fileURLWithPath: command[0]), arguments: Array(command.dropFirst()),
            environment: environment, workingDirectory: directory)
        let port = try await server.waitForPort()
        #expect(await server.standardErrorShows("SQLite store data/carousel.db is read-only: reads are served"))
        let before = try await httpRequest(port: port, "GET", "/banner").json
        let refused = try await httpRequest(port: port, "POST", "/banner/next")
        #expect(refused.status == 503)
        #expect(refused.header("Retry-After") == "5")
        #expect(refused.text.contains("the SQLite store data/carousel.db is read-only"), "\(refused.text)")
        let after = try await httpRequest(port: port, "GET", "/banner").json
        #expect(after["version"] as? Int == before["version"] as? Int)
        #expect(after["index"] as? Int == before["index"] as? Int)
        server.signal(SIGTERM)
        #expect(await server.waitForExit(seconds: 5) == 0)
    }

    @Test func aSecondProcessOnTheSameStoreExitsTwoNamingTheHolder() async throws {
        let directory = try Self.workingDirectory()
        let first = try ServerProcess(arguments: [], workingDirectory: directory)
        _ = try await first.waitForPort()
        let second = try ServerProcess(arguments: [], workingDirectory: directory)
        #expect(await second.waitForExit(seconds: 20) == 2)
        #expect(
            second.standardError.contains(
                "data/carousel.db is in use by process \(first.processIdentifier) (banner-server)"))
        first.signal(SIGTERM)
        #expect(await first.waitForExit(seconds: 5) == 0)
    }

    @Test func aStoreWithANewerSchemaIsRefused() async throws {
        let directory = try Self.workingDirectory()
        let path = directory.appendingPathComponent("newer.db").path
        try SQLiteConnection(path: path).execute("PRAGMA user_version = 99")
        let server = try ServerProcess(arguments: ["--store", path], workingDirectory: directory)
        #expect(await server.waitForExit(seconds: 20) == 2)
        #expect(
            server.standardError.contains(
                "\(path) has schema version 99, newer than this banner-server's \(SQLiteStore.schemaVersion)"))
    }

    @Test func exportImportExportPrintsTheSameBytes() async throws {
        let directory = try Self.workingDirectory()
        let seeded = try ServerProcess(arguments: ["export"], workingDirectory: directory)
        #expect(await seeded.waitForExit(seconds: 20) == 0)
        // An empty store exports no carousel: export does not seed.
        #expect(seeded.standardOutput == "{\n  \"carousels\": []\n}\n")

        let file = directory.appendingPathComponent("carousels.json")
        try #"""
        {"carousels": [
          {"name": "lobby", "interval": 2.5, "autoplay": false, "timeZone": "Europe/Berlin", "fallback": "x", "banners": [
            {"id": "x", "image": "https://cdn.example.com/x.png", "caption": "Spring \"sale\" ✿", "link": "https://shop.example.com/", "duration": 0.25},
            {"id": "y", "image": "https://cdn.example.com/y.png", "enabled": false, "startsAt": "2027-03-01T00:00:00+01:00",
             "endsAt": "2027-04-01T00:00:00.5Z", "windows": [{"days": ["sun", "mon"], "from": "22:00", "to": "06:00"}, {"from": "12:00", "to": "24:00"}]}]},
          {"name": "default"}]}
        """#.write(to: file, atomically: true, encoding: .utf8)
        let imported = try ServerProcess(arguments: ["import", file.path], workingDirectory: directory)
        #expect(await imported.waitForExit(seconds: 20) == 0)
        let first = try ServerProcess(arguments: ["export"], workingDirectory: directory)
        #expect(await first.waitForExit(seconds: 20) == 0)
        #expect(first.standardOutput.contains("\"caption\": \"Spring \\\"sale\\\" ✿\""))
        #expect(first.standardOutput.contains("\"startsAt\": \"2027-02-28T23:00:00.000Z\""))
        #expect(first.standardOutput.contains("\"timeZone\": \"Europe/Berlin\""))
        try first.standardOutput.write(to: file, atomically: true, encoding: .utf8)
        let again = try ServerProcess(arguments: ["import", file.path], workingDirectory: directory)
        #expect(await again.waitForExit(seconds: 20) == 0)
        let second = try ServerProcess(arguments: ["export"], workingDirectory: directory)
        #expect(await second.waitForExit(seconds: 20) == 0)
        #expect(second.standardOutput == first.standardOutput)
    }

    @Test func anInvalidImportChangesNothing() async throws {
        let directory = try Self.workingDirectory()
        let file = directory.appendingPathComponent("bad.json")
        try #"{"carousels": [{"name": "good"}, {"name": "Bad Name"}]}"#.write(
            to: file, atomically: true, encoding: .utf8)
        let refused = try ServerProcess(arguments: ["import", file.path], workingDirectory: directory)
        #expect(await refused.waitForExit(seconds: 20) == 2)
        #expect(
            refused.standardError.contains(
                "\(file.path): carousels[1].name: 'Bad Name' must be 1 to 64 of a-z 0-9 and -, starting with a letter or digit"
            ))
        let export = try ServerProcess(arguments: ["export"], workingDirectory: directory)
        #expect(await export.waitForExit(seconds: 20) == 0)
        #expect(export.standardOutput == "{\n  \"carousels\": []\n}\n")
    }

    @Test func aConfigurationThatDiffersFromTheStoreIsWarnedAbout() async throws {
        let directory = try Self.workingDirectory()
        let first = try ServerProcess(arguments: [], workingDirectory: directory)
        _ = try await first.waitForPort()
        first.signal(SIGTERM)
        #expect(await first.waitForExit(seconds: 5) == 0)
        let file = directory.appendingPathComponent("config/carousel.json")
        try String(contentsOf: file, encoding: .utf8).replacingOccurrences(of: "3600", with: "9")
            .write(to: file, atomically: true, encoding: .utf8)
        let second = try ServerProcess(arguments: [], workingDirectory: directory)
        let port = try await second.waitForPort()
        #expect(
            await second.standardErrorShows(
                "config/carousel.json differs from SQLite store data/carousel.db for carousel 'default'; the store is "
                    + "what is served. To serve the file instead: banner-server import config/carousel.json"))
        #expect(try await httpRequest(port: port, "GET", "/banner").json["interval"] as? Double == 3600)
        second.signal(SIGTERM)
        #expect(await second.waitForExit(seconds: 5) == 0)
    }
}
