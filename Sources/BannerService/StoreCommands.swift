import Carousel
import Definitions
import Logging
import Store
import TimeZones

/// `banner-server import FILE` and `banner-server export`: each opens the store, does its one
/// job, and returns the exit status (0; 2 when the store cannot be used, as for a bad
/// configuration; 1 when it failed now). Messages go to standard error.
public enum StoreCommands {
    public static func importDefinitions(
        _ definitions: [CarouselDefinition], images: [LibraryFile] = [], from path: String,
        into location: StoreLocation
    )
        -> Int32
    {
        do {
            let store = try location.open()
            try StoreSeeding.importDefinitions(definitions, images: images, into: store, now: Timestamp.now())
            StandardStream.error.writeLine(
                "banner-server: imported \(summary(of: definitions.map(\.name))) from \(path) into \(store.description)"
            )
            return 0
        } catch {
            return failed(error, doing: "import")
        }
    }

    public static func export(from location: StoreLocation) -> Int32 {
        do {
            let store = try location.open()
            StandardStream.output.write(try StoreSeeding.export(store))
            return 0
        } catch {
            return failed(error, doing: "export")
        }
    }

    /// The names, or for more than five a count and the first three: a file of thousands of
    /// carousels must not print them all on one line.
    static func summary(of names: [String]) -> String {
        guard names.count > 5 else { return names.joined(separator: ", ") }
        return "\(names.count) carousels (\(names.prefix(3).joined(separator: ", ")), …)"
    }

    private static func failed(_ error: StoreError, doing command: String) -> Int32 {
        StandardStream.error.writeLine("banner-server: \(command) failed: \(error)")
        if case .unusable = error { return 2 }
        return 1
    }
}
