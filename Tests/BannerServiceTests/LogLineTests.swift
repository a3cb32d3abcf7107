import Logging
import Testing
import Threading

@Suite("Log lines")
struct LogLineTests {
    /// Whatever a client puts in a path, a header or a body, a message that quotes it stays one
    /// line: control characters and Unicode line separators are escaped.
    @Test(arguments: [
        (
            "GET /nope\n2026-12-03T06:00:00.000Z critical [banner-server] forged",
            "GET /nope\\n2026-12-03T06:00:00.000Z critical [banner-server] forged"
        ),
        (
            "a\rb\tc\u{1b}[31md\u{7f}e\u{85}f\u{2028}g\u{2029}h",
            "a\\rb\\tc\\u{1b}[31md\\u{7f}e\\u{85}f\\u{2028}g\\u{2029}h"
        ),
        ("plain text, ünïcödé and emoji 🎠", "plain text, ünïcödé and emoji 🎠"),
        // Read over UTF-8 bytes: each escaped one beside other non-ASCII, and the scalars whose
        // bytes are nearest theirs (U+00A0, U+2027, U+202A, €) left as they are.
        ("→\u{80}→\u{9f}→\u{2028}", "→\\u{80}→\\u{9f}→\\u{2028}"),
        ("→ \u{a0}\u{2027}\u{202a}€ index 3", "→ \u{a0}\u{2027}\u{202a}€ index 3"),
    ])
    func aMessageIsOneLineWhateverItQuotes(_ message: String, _ written: String) {
        let lines = Lock<[String]>([])
        let logger = Logger(label: "test", minimumLevel: .trace, sink: { line in lines.withLock { $0.append(line) } })
        logger.notice(message)
        let line = lines.withLock { $0 }
        #expect(line.count == 1)
        #expect(line.first?.hasSuffix(" notice [test] \(written)") == true)
        #expect(line.first?.unicodeScalars.contains { $0.value < 0x20 || $0 == "\u{2028}" } == false)
    }
}
