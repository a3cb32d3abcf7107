import Foundation
import TestSupport
import Testing
import Threading

let validConfiguration = #"""
    {"host": "127.0.0.1", "port": 0, "interval": 3600,
     "banners": [{"id": "a", "image": "https://cdn.example.com/a.png", "caption": "A"},
                 {"id": "b", "image": "https://cdn.example.com/b.png", "caption": "B"}]}
    """#

@Suite("banner-server executable")
struct BannerServerTests {
    @Test func printsTheListeningLineWithTheRealPortAndServes() async throws {
        let config = try temporaryFile(contents: validConfiguration)
        let server = try ServerProcess(arguments: ["--config", config.path])
        let port = try await server.waitForPort()
        #expect(port > 0)
        #expect(server.standardOutput.hasPrefix("listening on http://127.0.0.1:\(port)\n"))
        let state = try await httpRequest(port: port, "GET", "/banner")
        #expect(try state.json["count"] as? Int == 2)
        server.signal(SIGTERM)
        #expect(await server.waitForExit(seconds: 5) == 0)
    }

    /// `top -H`, `perf` and a stack dump say which thread is busy; with `--fast-paths off` there
    /// is no acceptor and no read loop, and libmicrohttpd answers (the same bytes, checked by
    /// the differential test).
    @Test(arguments: ["on", "off"])
    func theHTTPThreadsAreNamedAndTheFastPathsExistOnlyWhenOn(_ fastPaths: String) async throws {
        let config = try temporaryFile(contents: validConfiguration)
        let server = try ServerProcess(arguments: [
            "--config", config.path, "--threads", "2", "--fast-paths", fastPaths,
        ])
        let port = try await server.waitForPort()
        #expect(try await httpRequest(port: port, "GET", "/banner").status == 200)
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(server.processIdentifier)/task")
        let names = tasks.compactMap {
            try? String(contentsOfFile: "/proc/\(server.processIdentifier)/task/\($0)/comm", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let fastPathThreads = names.filter { $0 == "http-acceptor" || $0.hasPrefix("http-read-") }.sorted()
        #expect(fastPathThreads == (fastPaths == "on" ? ["http-acceptor", "http-read-0", "http-read-1"] : []))
        server.signal(SIGTERM)
        #expect(await server.waitForExit(seconds: 5) == 0)
    }

    /// libvips, libcurl and libpq (and the hundred libraries they bring) are opened on first use,
    /// not at start (docs/PERFORMANCE.md, idle memory): a service on SQLite that took no upload
    /// has none of them mapped; its first upload maps libvips, not libpq.
    @Test func theImageWebhookAndPostgreSQLLibrariesAreOpenedOnFirstUse() async throws {
        let config = try temporaryFile(contents: validConfiguration)
        let server = try ServerProcess(arguments: ["--config", config.path])
        let port = try await server.waitForPort()
        #expect(try await httpRequest(port: port, "GET", "/banner").status == 200)
        func mapped() throws -> Set<String> {
            // Read to its end: a /proc file says it is empty (Foundation would read nothing).
            let maps = try #require(textOfFile(atPath: "/proc/\(server.processIdentifier)/maps"))
            #expect(maps.contains("libmicrohttpd.so"), "the maps were read")
            let names = maps.split(separator: "\n").compactMap { $0.split(separator: "/").last.map(String.init) }
            return Set(
                ["libvips", "libcurl", "libpq"].filter { library in names.contains { $0.hasPrefix(library + ".so") } })
        }
        #expect(try mapped().isEmpty)
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../MediaTests/Fixtures").standardized
        let jpeg = Array(try Data(contentsOf: fixtures.appendingPathComponent("wide.jpg")))
        let uploaded = try await HTTPConnection(port: port, timeoutSeconds: 60).send(
            "POST", "/media", headers: [("Content-Type", "image/jpeg")], body: jpeg)
        #expect(uploaded.status == 201, "\(uploaded.text)")
        let afterUpload = try mapped()
        // (libvips brings libcurl along, through its codecs.)
        #expect(afterUpload.contains("libvips") && !afterUpload.contains("libpq"), "\(afterUpload)")
        server.signal(SIGTERM)
        #expect(await server.waitForExit(seconds: 5) == 0)
    }

    /// A request refused for its credentials is logged at the default level, a read too: guessing
    /// tokens leaves a trace (within a budget of lines, RefusedCredentialsTests).
    @Test func aRefusedTokenIsLoggedAtTheDefaultLevel() async throws {
        let config = try temporaryFile(contents: validConfiguration)
        let server = try ServerProcess(
            arguments: ["--config", config.path], environment: ["CAROUSEL_ADMIN_TOKEN": "the-admin-token-2026"])
        let port = try await server.waitForPort()
        let guess = [("Authorization", "Bearer a-guessed-token")]
        #expect(try await httpRequest(port: port, "GET", "/tokens", headers: guess).status == 401)
        #expect(await server.standardErrorShows(" info [banner-server] GET /tokens refused: 401 "))
        #expect(!server.standardError.contains("a-guessed-token"), "a token sent is never logged")
        server.signal(SIGTERM)
        #expect(await server.waitForExit(seconds: 5) == 0)
    }

    /// A decoded path with a line break in it is logged on one line: no request forges a line.
    @Test func aPathCannotForgeALogLine() async throws {
        let config = try temporaryFile(contents: validConfiguration)
        let server = try ServerProcess(arguments: ["--config", config.path, "--log-level", "notice"])
        let port = try await server.waitForPort()
        let forged = "/nope%0a2026-12-03T06:00:00.000Z%20critical%20[banner-server]%20forged"
        #expect(try await httpRequest(port: port, "POST", forged).status == 404)
        #expect(await server.standardErrorShows("refused: 404"))
        let lines = server.standardError.split(separator: "\n")
        #expect(!lines.contains { $0.hasPrefix("2026-12-03T06:00:00.000Z") })
        #expect(lines.contains { $0.contains("POST /nope\\n2026-12-03T06:00:00.000Z critical [banner-server] forged") })
        server.signal(SIGTERM)
        #expect(await server.waitForExit(seconds: 5) == 0)
    }

    @Test func aFastPathsValueOtherThanOnOrOffExits2() async throws {
        let config = try temporaryFile(contents: validConfiguration)
        let server = try ServerProcess(arguments: ["--config", config.path, "--fast-paths", "maybe"])
        #expect(await server.waitForExit(seconds: 10) == 2)
        #expect(server.standardError.contains("--fast-paths: 'maybe' is not on or off"))
    }

    @Test func sigtermWithAnIdleKeepAliveConnectionExitsZeroWithinFiveSeconds() async throws {
        let config = try temporaryFile(contents: validConfiguration)
        // The connection stays idle until the signal however long a loaded run takes to get there
        // (CI's ThreadSanitizer run once found it closed by the 15 s default first).
        let server = try ServerProcess(arguments: ["--config", config.path, "--connection-timeout", "3600"])
        let port = try await server.waitForPort()
        let idle = try HTTPConnection(port: port)
        #expect(try await idle.send("GET", "/banner").status == 200)
        #expect(!idle.isClosedByPeer)
        server.signal(SIGTERM)
        #expect(await server.waitForExit(seconds: 5) == 0)
        #expect(await idle.waitForClose())
        #expect(server.standardError.contains("received SIGTERM; stopping"))
    }

    @Test func sigtermWithOpenEventStreamsExitsZeroWithinFiveSeconds() async throws {
        let config = try temporaryFile(contents: validConfiguration)
        let server = try ServerProcess(arguments: ["--config", config.path])
        let port = try await server.waitForPort()
        var streams: [EventStreamReader] = []
        for _ in 0..<3 {
            let connection = try HTTPConnection(port: port)
            _ = try await connection.openStream("/banner/events")
            let events = EventStreamReader(connection)
            #expect(try await events.nextEvent()?.event == "state")
            streams.append(events)
        }
        server.signal(SIGTERM)
        #expect(await server.waitForExit(seconds: 5) == 0)
        for events in streams {
            let ended = try? await events.nextEvent()
            #expect(ended == nil)
        }
    }

    /// Every descriptor the process may open in use: the service says which limit to raise, then
    /// serves again once connections close.
    @Test func runningOutOfDescriptorsIsReportedAndServedAgainAfter() async throws {
        let config = try temporaryFile(contents: validConfiguration)
        let server = try ServerProcess(
            executable: URL(fileURLWithPath: "/usr/bin/prlimit"),
            arguments: [
                "--nofile=128:128", ServerProcess.executable.path, "--config", config.path, "--store", "memory",
            ])
        let port = try await server.waitForPort()
        var silent: [HTTPConnection] = []
        for _ in 0..<160 { silent.append(try HTTPConnection(port: port)) }  // the kernel completes them all
        #expect(await server.standardErrorShows("cannot accept connections: Too many open files"))
        #expect(server.standardError.contains("raise the open-file limit (ulimit -n)"))
        silent.removeAll()
        #expect(
            await eventually(within: 30) {
                (try? await httpRequest(port: port, "GET", "/healthz").status) == 200
            })
        server.signal(SIGTERM)
        #expect(await server.waitForExit(seconds: 5) == 0)
    }

    @Test func sigtermDuringSustainedLoadExitsZeroWithinFiveSeconds() async throws {
        let config = try temporaryFile(contents: validConfiguration)
        // Connections never idle out: a loaded run (a sanitizer's, every test at once) can leave a
        // client's task waiting to send its next request for longer than the usual 15 s, and a
        // client whose connection closed stops, taking it for the server stopping.
        let server = try ServerProcess(arguments: ["--config", config.path, "--connection-timeout", "3600"])
        let port = try await server.waitForPort()
        let answered = Lock(0)
        let load = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for client in 0..<8 {
                    group.addTask {
                        let connection = try HTTPConnection(port: port)
                        while !Task.isCancelled {
                            let path = client.isMultiple(of: 2) ? "/banner" : "/banner/next"
                            guard (try? await connection.send(client.isMultiple(of: 2) ? "GET" : "POST", path)) != nil
                            else { break }  // the server closed the connection: it is stopping
                            answered.withLock { $0 += 1 }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        // The signal lands while reads and commands are in flight on every connection.
        #expect(await eventually(within: 60) { answered.withLock { $0 } >= 400 }, "the load never got going")
        server.signal(SIGTERM)
        #expect(await server.waitForExit(seconds: 5) == 0)
        load.cancel()
        try await load.value
    }

    @Test func sigintAlsoStopsItCleanly() async throws {
        let config = try temporaryFile(contents: validConfiguration)
        let server = try ServerProcess(arguments: ["--config", config.path])
        _ = try await server.waitForPort()
        server.signal(SIGINT)
        #expect(await server.waitForExit(seconds: 5) == 0)
    }

    @Test func logLinesCarryATimestampAndALevel() async throws {
        let config = try temporaryFile(contents: validConfiguration)
        let server = try ServerProcess(arguments: ["--config", config.path])
        let port = try await server.waitForPort()
        _ = try await httpRequest(port: port, "POST", "/banner/next")
        server.signal(SIGTERM)
        _ = await server.waitForExit(seconds: 5)
        let lines = server.standardError.split(separator: "\n")
        #expect(!lines.isEmpty)
        let pattern =
            #/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (trace|debug|info|notice|warning|error|critical) \[banner-server\] .+$/#
        for line in lines {
            #expect(line.wholeMatch(of: pattern) != nil, "\(line)")
        }
        #expect(
            lines.contains { $0.contains(/POST \/banner\/next \[[0-9a-f-]{36}\] → index 1 of 2, playing, version 2$/) })
    }

    @Test func workerThreadsFollowTheCPUAffinityUnlessConfigured() async throws {
        let config = try temporaryFile(contents: validConfiguration)
        let pinned = try ServerProcess(
            executable: URL(fileURLWithPath: "/usr/bin/taskset"),
            arguments: ["-c", "0", ServerProcess.executable.path, "--config", config.path])
        _ = try await pinned.waitForPort()
        #expect(await pinned.standardErrorShows(", 1 worker thread\n"))
        pinned.signal(SIGTERM)
        #expect(await pinned.waitForExit(seconds: 5) == 0)

        let configured = try ServerProcess(arguments: ["--config", config.path, "--threads", "3"])
        _ = try await configured.waitForPort()
        #expect(await configured.standardErrorShows(", 3 worker threads\n"))
        configured.signal(SIGTERM)
        #expect(await configured.waitForExit(seconds: 5) == 0)
    }

    @Test func theOpenFileLimitIsRaisedForTheConnectionLimit() async throws {
        let config = try temporaryFile(contents: validConfiguration)
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        // An unprivileged process cannot go above its hard limit; "unlimited" when there is none.
        let hardLimit = Int(clamping: limit.rlim_max)
        let hardText = limit.rlim_max == rlim_t.max ? "unlimited" : String(hardLimit)
        let roomy = try ServerProcess(
            executable: URL(fileURLWithPath: "/usr/bin/prlimit"),
            arguments: ["--nofile=1024:\(hardText)", ServerProcess.executable.path, "--config", config.path])
        _ = try await roomy.waitForPort()
        let limits = try #require(textOfFile(atPath: "/proc/\(roomy.processIdentifier)/limits"))
        // 16,384 connections, 64 descriptors to spare and 512 memory files for response bodies,
        // as far as the hard limit allows.
        let expected = min(16384 + 64 + 512, hardLimit)
        #expect(limits.contains("Max open files            \(expected)"), "\(limits)")
        roomy.signal(SIGTERM)
        #expect(await roomy.waitForExit(seconds: 5) == 0)

        let tight = try ServerProcess(
            executable: URL(fileURLWithPath: "/usr/bin/prlimit"),
            arguments: ["--nofile=512:512", ServerProcess.executable.path, "--config", config.path])
        _ = try await tight.waitForPort()
        #expect(await tight.standardErrorShows("warning [banner-server] open-file limit is 512 (hard limit)"))
        tight.signal(SIGTERM)
        #expect(await tight.waitForExit(seconds: 5) == 0)
    }

    @Test func anInvalidConfigurationExitsTwoNamingTheFileAndField() async throws {
        let config = try temporaryFile(
            contents:
                #"{"banners": [{"id": "a", "image": "https://x.example/a"}, {"id": "b", "image": "ftp://x.example/b.png"}]}"#
        )
        let server = try ServerProcess(arguments: ["--config", config.path])
        #expect(await server.waitForExit(seconds: 10) == 2)
        #expect(
            server.standardError
                == "banner-server: invalid configuration: \(config.path): banners[1].image: not an absolute http(s) URL nor a media library path (/media/ID)\n"
        )
        #expect(server.standardOutput.isEmpty)
    }

    @Test func anUnknownFlagExitsTwo() async throws {
        let server = try ServerProcess(arguments: ["--prot", "80"])
        #expect(await server.waitForExit(seconds: 10) == 2)
        #expect(server.standardError.contains("--prot: unknown option; see --help"))
    }

    @Test func theHealthcheckSubcommandAsksTheConfiguredAddress() async throws {
        let config = try temporaryFile(contents: validConfiguration)
        let server = try ServerProcess(arguments: ["--config", config.path])
        let port = try await server.waitForPort()
        let healthy = try ServerProcess(arguments: ["healthcheck", "--config", config.path, "--port", String(port)])
        #expect(await healthy.waitForExit(seconds: 10) == 0)
        #expect(healthy.standardError.isEmpty)
        server.signal(SIGTERM)
        #expect(await server.waitForExit(seconds: 5) == 0)

        let nobody = try ServerProcess(arguments: ["healthcheck", "--config", config.path, "--port", String(port)])
        #expect(await nobody.waitForExit(seconds: 10) == 1)
        #expect(
            nobody.standardError
                == "banner-server healthcheck: cannot connect to 127.0.0.1:\(port): connection refused; nothing listens there (ECONNREFUSED)\n"
        )
    }

    @Test func theHealthcheckSubcommandRefusesAnAnswerThatIsNotHealthy() async throws {
        // Something else on the port, answering 404 to /healthz.
        let config = try temporaryFile(contents: validConfiguration)
        let other = try ServerProcess(
            executable: URL(fileURLWithPath: "/usr/bin/python3"),
            arguments: ["-u", "-m", "http.server", "--bind", "127.0.0.1", "0"])
        let port = try await other.waitForPythonPort()
        let check = try ServerProcess(arguments: ["healthcheck", "--config", config.path, "--port", String(port)])
        #expect(await check.waitForExit(seconds: 10) == 1)
        #expect(check.standardError == "banner-server healthcheck: /healthz answered 404\n")
    }

    @Test func helpPrintsUsageAndExitsZero() async throws {
        let server = try ServerProcess(arguments: ["--help"])
        #expect(await server.waitForExit(seconds: 10) == 0)
        #expect(server.standardOutput.hasPrefix("Usage: banner-server"))
    }

    @Test func theEnvironmentConfiguresPortAndToken() async throws {
        let config = try temporaryFile(contents: #"{"host": "127.0.0.1", "port": 1}"#)
        let server = try ServerProcess(
            arguments: [],
            environment: [
                "CAROUSEL_CONFIG": config.path, "CAROUSEL_PORT": "0", "CAROUSEL_CONTROL_TOKEN": "abc-control-token",
            ])
        let port = try await server.waitForPort()
        #expect(try await httpRequest(port: port, "POST", "/banner/pause").status == 401)
        #expect(
            try await httpRequest(
                port: port, "POST", "/banner/pause", headers: [("Authorization", "Bearer abc-control-token")]
            )
            .status
                == 200)
        server.signal(SIGTERM)
        #expect(await server.waitForExit(seconds: 5) == 0)
    }

    /// Tokens from files (as container secrets are mounted), and never in the log, whatever happens.
    @Test func tokensComeFromFilesAndAreNeverLogged() async throws {
        let config = try temporaryFile(contents: #"{"host": "127.0.0.1", "port": 0}"#)
        let admin = try temporaryFile(named: "admin-token", contents: "adm1n-s3cret-token\n")
        let server = try ServerProcess(
            arguments: ["--log-level", "trace"],
            environment: [
                "CAROUSEL_CONFIG": config.path, "CAROUSEL_CONTROL_TOKEN": "c0ntrol-s3cret-token",
                "CAROUSEL_ADMIN_TOKEN_FILE": admin.path,
            ])
        let port = try await server.waitForPort()
        let wrong = try await httpRequest(
            port: port, "DELETE", "/carousels/default", headers: [("Authorization", "Bearer c0ntrol-s3cret-token")])
        #expect(wrong.status == 403, "the control token is known, and not the admin one")
        let right = try await httpRequest(
            port: port, "POST", "/banner/pause", headers: [("Authorization", "Bearer adm1n-s3cret-token")])
        #expect(right.status == 200)
        #expect(
            try await httpRequest(
                port: port, "DELETE", "/carousels/default", headers: [("Authorization", "Bearer adm1n-s3cret-token")]
            ).status == 204)
        server.signal(SIGTERM)
        #expect(await server.waitForExit(seconds: 5) == 0)
        #expect(server.standardError.contains("commands need a token, admin needs the admin token"))
        #expect(!server.standardError.contains("s3cret"))
    }

    @Test func aPortInUseExitsOneWithTheReason() async throws {
        let config = try temporaryFile(contents: validConfiguration)
        let first = try ServerProcess(arguments: ["--config", config.path])
        let port = try await first.waitForPort()
        let second = try ServerProcess(arguments: ["--config", config.path, "--port", String(port)])
        #expect(await second.waitForExit(seconds: 10) == 1)
        #expect(
            second.standardError.contains(
                "cannot start: cannot listen on 127.0.0.1:\(port): address already in use; another process holds the port (EADDRINUSE)"
            ))
        first.signal(SIGTERM)
        _ = await first.waitForExit(seconds: 5)
    }

    /// `make run`'s first look: the shipped banners are images of the library, with their variants.
    @Test func theShippedConfigurationServesItsImagesFromTheLibrary() async throws {
        let server = try ServerProcess(arguments: [
            "--config", repositoryFile("config/carousel.json"), "--host", "127.0.0.1", "--port", "0", "--store",
            "memory",
        ])
        let port = try await server.waitForPort()
        let banner = try await httpRequest(port: port, "GET", "/banner").json["banner"] as? [String: Any]
        let image = try #require(banner?["image"] as? String)
        #expect(image.hasPrefix("/media/") && image.count == "/media/".count + 64, "\(image)")
        let variant = try await httpRequest(port: port, "GET", image + "/480.webp")
        #expect(variant.status == 200)
        #expect(variant.header("Content-Type") == "image/webp")
        let original = try await httpRequest(port: port, "GET", image)
        #expect(original.status == 200 && original.header("Content-Type") == "image/jpeg")
        server.signal(SIGTERM)
        #expect(await server.waitForExit(seconds: 5) == 0)
    }

    @Test func withoutAConfigurationFileItStartsEmptyAndSaysSo() async throws {
        let directory = try temporaryFile(contents: "").deletingLastPathComponent()
        let server = try ServerProcess(arguments: ["--host", "127.0.0.1", "--port", "0"], workingDirectory: directory)
        let port = try await server.waitForPort()
        #expect(try await httpRequest(port: port, "GET", "/banner").json["count"] as? Int == 0)
        #expect(
            await server.standardErrorShows("warning [banner-server] no configuration file at config/carousel.json"))
        server.signal(SIGTERM)
        #expect(await server.waitForExit(seconds: 5) == 0)
    }
}
