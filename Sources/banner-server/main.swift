// banner-server: parse flags, start, wait for SIGTERM/SIGINT, stop.
import BannerService
import Glibc

// SIGTERM and SIGINT must be blocked in every thread, so that they stay pending until `sigwait`
// below takes them; a thread with them unblocked would let the default action kill the process.
// Threads inherit the mask of their creator, so block them before any thread exists. (This is also
// why there is no top-level `await` here: it would hand the main thread to Dispatch's main queue.)
var stopSignals = sigset_t()
sigemptyset(&stopSignals)
sigaddset(&stopSignals, SIGTERM)
sigaddset(&stopSignals, SIGINT)
pthread_sigmask(SIG_BLOCK, &stopSignals, nil)

let configuration: ServiceConfiguration
let notes: [String]
do {
    switch try Launch.parse(
        arguments: Array(CommandLine.arguments.dropFirst()), environment: Launch.processEnvironment())
    {
    case .help:
        StandardStream.output.writeLine(Launch.usage)
        exit(0)
    case .run(let parsed, let parsedNotes):
        configuration = parsed
        notes = parsedNotes
    }
} catch {
    StandardStream.error.writeLine("banner-server: invalid configuration: \(error)")
    exit(2)
}

let logger = Logger(label: "banner-server", minimumLevel: configuration.logLevel)
for note in notes { logger.warning(note) }

let service: CarouselService
do {
    service = try CarouselService.start(configuration: configuration, logger: logger)
} catch {
    logger.critical("cannot start: \(error)")
    exit(1)
}
StandardStream.output.writeLine("listening on \(configuration.url(boundPort: service.port))")

var received: Int32 = 0
sigwait(&stopSignals, &received)
logger.notice("received \(received == SIGTERM ? "SIGTERM" : "SIGINT"); stopping")
service.stop()
logger.notice("stopped")
exit(0)
