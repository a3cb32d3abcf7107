// banner-server: parse flags, start, wait for SIGTERM/SIGINT, stop. Or one of the subcommands:
// healthcheck, import FILE, export.
import BannerService
import Glibc
import Logging

StopSignals.install()

let configuration: ServiceConfiguration
let notes: [String]
do {
    switch try Launch.parse(
        arguments: Array(CommandLine.arguments.dropFirst()), environment: Launch.processEnvironment())
    {
    case .help:
        StandardStream.output.writeLine(Launch.usage)
        exit(0)
    case .healthCheck(let target):
        exit(HealthCheck.run(target))
    case .importFile(let target, let definitions, let images, let path):
        exit(StoreCommands.importDefinitions(definitions, images: images, from: path, into: target.store))
    case .export(let source):
        exit(StoreCommands.export(from: source.store))
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
    exit(error.exitCode)
}
StandardStream.output.writeLine("listening on \(configuration.url(boundPort: service.port))")

let received = StopSignals.wait()
logger.notice("received \(StopSignals.name(received)); stopping")
service.stop()
logger.notice("stopped")
exit(0)
