import Foundation
import TestSupport
import Testing

@testable import BannerAPI

/// The route table (docs/ARCHITECTURE.md, "Routes"): every endpoint declared once, with who may
/// call it; the table denies by default, the OpenAPI document and docs/API.md's route list say
/// what it says.
@Suite("Route table")
struct RouteTableTests {
    /// What the table itself promises, whatever an endpoint does: a write names who made it, a
    /// command or a stats read is about a carousel, no endpoint is declared twice.
    @Test func everyWriteIsAuditedAndNamesItsCaller() {
        for endpoint in Routes.table {
            let name = "\(endpoint.method) \(endpoint.template)"
            if endpoint.audited { #expect(endpoint.access.needsCaller, "\(name): an audited write names a caller") }
            if ["POST", "PUT", "PATCH", "DELETE"].contains(endpoint.method) {
                #expect(
                    endpoint.audited || endpoint.access == .screen,
                    "\(name): every write but a screen's reports is in the audit log")
            }
            if endpoint.access == .control || endpoint.access == .stats {
                #expect(endpoint.isCarouselScoped, "\(name): control and stats roles are about a carousel")
            }
            if endpoint.fastPath == .stream { #expect(endpoint.method == "GET", "\(name)") }
            if endpoint.method != "GET" && endpoint.method != "HEAD" {
                #expect(endpoint.fastPath != .stream, "\(name)")
            }
        }
        let keys = Routes.table.map { "\($0.method) \($0.template)" }
        #expect(Set(keys).count == keys.count, "an endpoint is declared once")
    }

    /// The document served at `/openapi.json` has exactly the table's paths, methods and
    /// operations, each operation's security as its rule says.
    @Test func theOpenAPIDocumentIsTheTables() async throws {
        let response = await RouterHarness().send("GET", "/openapi.json")
        let document = try response.json
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let documented = Routes.table.filter { $0.operation != nil }
        #expect(Set(paths.keys) == Set(documented.map(\.template)))
        for endpoint in documented {
            let name = "\(endpoint.method) \(endpoint.template)"
            let operation = paths[endpoint.template]?[endpoint.method.lowercased()] as? [String: Any]
            #expect(operation?["operationId"] as? String == endpoint.operation, "\(name)")
            let security = (operation?["security"] as? [[String: Any]])?.map { Set($0.keys) }
            let expected: [Set<String>]? =
                switch endpoint.access {
                case .public, .screen: nil
                case .control: [[], ["controlToken"]]
                case .stats, .admin: [[], ["adminToken"]]
                }
            #expect(security == expected, "\(name)")
        }
        for (path, operations) in paths {
            let methods = Set(operations.keys.filter { $0 != "parameters" }.map { $0.uppercased() })
            #expect(methods == Set(Routes.methods(of: path)), "\(path)")
        }
    }

    /// docs/API.md's route list is the table's, line for line: on a mismatch the test prints the
    /// list to paste.
    @Test func docsAPIListsEveryRoute() throws {
        let api = try String(contentsOfFile: repositoryFile("docs/API.md"), encoding: .utf8)
        let start = api.range(of: "\n## Route list\n")
        try #require(start != nil, "docs/API.md has a \"## Route list\" section")
        let section = api[start!.upperBound...].split(separator: "\n## ", maxSplits: 1)[0]
        let documented = section.split(separator: "\n").filter { $0.hasPrefix("| `") }.map(String.init)
        let expected = Self.routeList()
        #expect(documented == expected, "docs/API.md's route list should read:\n\(expected.joined(separator: "\n"))")
    }

    /// One line per path template and rule, in the table's order: `| `/banner` | GET, HEAD | public |`.
    static func routeList() -> [String] {
        var lines: [String] = []
        var methods: [String: [String]] = [:]
        for endpoint in Routes.table {
            let key = "| `\(endpoint.template)` | \u{0} | \(endpoint.access.rawValue) |"
            if methods[key] == nil { lines.append(key) }
            methods[key, default: []].append(endpoint.method)
        }
        return lines.map { $0.replacingOccurrences(of: "\u{0}", with: methods[$0]!.joined(separator: ", ")) }
    }

    /// Every endpoint that is not public, on every transport: 401 without a token, 403 with a
    /// token of a lower role or scoped to another carousel, and neither with a token that may call
    /// it. The rules come from the table, so this walks the table.
    @Test(arguments: Transport.allCases)
    func everyEndpointDeniesWhatItsRuleDenies(_ transport: Transport) async throws {
        let service = try await transport.start(token: "env-control", adminToken: "env-admin")
        let admin = [("Authorization", "Bearer env-admin")]
        let created = try await service.request(
            "POST", "/carousels", headers: admin + [("Content-Type", "application/json")],
            body: #"{"name": "other", "banners": []}"#)
        try #require(created.status == 201, "\(created.text)")
        var tokens: [String: String] = [:]
        for (name, role, carousels) in [
            ("control", "control", nil), ("stats", "stats", nil), ("control-other", "control", "other"),
            ("stats-other", "stats", "other"), ("admin-other", "admin", "other"),
        ] {
            let scope = carousels.map { #", "carousels": ["\#($0)"]"# } ?? ""
            let made = try await service.request(
                "POST", "/tokens", headers: admin + [("Content-Type", "application/json")],
                body: #"{"name": "\#(name)", "role": "\#(role)"\#(scope)}"#)
            tokens[name] = try #require(try made.json["secret"] as? String, "\(made.text)")
        }
        func bearer(_ token: String) -> [(String, String)] { [("Authorization", "Bearer \(token)")] }

        for endpoint in Routes.table {
            // About `default` (bare v1 paths are), where other carousels' tokens are refused.
            let path = Self.path(endpoint.template, carousel: "default")
            let name = "\(endpoint.method) \(path)"
            func status(_ headers: [(String, String)]) async throws -> Int {
                try await service.request(endpoint.method, path, headers: headers).status
            }
            guard endpoint.access.needsCaller else {
                if endpoint.fastPath != .stream {
                    #expect(![401, 403].contains(try await status([])), "\(name) is open to all")
                }
                continue
            }
            #expect(try await status([]) == 401, "\(name) without a token")
            #expect(try await status(bearer("not-a-token")) == 401, "\(name) with an unknown token")
            let lower: [String] =
                switch endpoint.access {
                case .control: [tokens["stats"]!]
                case .stats: [tokens["control"]!, "env-control"]
                default: [tokens["control"]!, tokens["stats"]!, "env-control"]
                }
            for token in lower {
                #expect(try await status(bearer(token)) == 403, "\(name) with a lower role")
            }
            let otherScope =
                switch endpoint.access {
                case .control: tokens["control-other"]!
                case .stats: tokens["stats-other"]!
                default: tokens["admin-other"]!
                }
            #expect(try await status(bearer(otherScope)) == 403, "\(name) with another carousel's token")
            // A token that may call it gets past the rule: about a carousel that does not exist
            // (so nothing changes), or the service's placeholders (nothing of that name).
            if endpoint.fastPath != .stream {
                let harmless = Self.path(endpoint.template, carousel: "nope")
                let allowed = endpoint.access == .control ? "env-control" : "env-admin"
                let answer = try await service.request(endpoint.method, harmless, headers: bearer(allowed))
                #expect(![401, 403].contains(answer.status), "\(endpoint.method) \(harmless): \(answer.text)")
            }
        }
    }

    /// A template with every parameter given: the carousel, and names of nothing stored.
    static func path(_ template: String, carousel: String) -> String {
        let prefix = "/carousels/{name}"
        let named = template.hasPrefix(prefix) ? "/carousels/\(carousel)" + template.dropFirst(prefix.count) : template
        return
            named
            .replacingOccurrences(of: "/media/{id}", with: "/media/" + String(repeating: "0", count: 64))
            .replacingOccurrences(of: "/banners/{id}", with: "/banners/b1")
            .replacingOccurrences(of: "/screens/{id}", with: "/screens/wall-1")
            .replacingOccurrences(of: "{width}", with: "480")
            .replacingOccurrences(of: "{n}", with: "1")
            .replacingOccurrences(of: "/tokens/{name}", with: "/tokens/nope")
            .replacingOccurrences(of: "{id}", with: "999")
    }
}
