import Carousel
import Definitions
import Threading
import TimeZones

extension MemoryStore: ScreenStore {
    public func saveScreens(_ sightings: [ScreenSighting], timeout: Duration) throws(StoreError) {
        contents.withLock { contents in
            let serials = Set(contents.carousels.values.map(\.serial))
            for sighting in sightings where serials.contains(sighting.key.carousel) {
                contents.screens[sighting.key] = sighting.merged(into: contents.screens[sighting.key], timeout: timeout)
            }
        }
    }

    public func keepScreens(_ rows: [ScreenRecord]) throws(StoreError) {
        contents.withLock { contents in
            let serials = Set(contents.carousels.values.map(\.serial))
            for row in rows where serials.contains(row.carousel) { contents.screens[row.key] = row }
        }
    }

    public func screens() throws(StoreError) -> [ScreenRecord] {
        contents.withLock { Array($0.screens.values) }
    }

    public func forgetScreens(silentSince cutoff: Timestamp) throws(StoreError) -> Int {
        contents.withLock { contents in
            let before = contents.screens.count
            contents.screens = contents.screens.filter { $0.value.lastSeen >= cutoff }
            return before - contents.screens.count
        }
    }

    public func forgetScreens(_ keys: [ScreenRecord.Key], audit: [AuditEntry]) throws(StoreError) {
        contents.withLock { contents in
            for key in keys { contents.screens[key] = nil }
            contents.append(audit)
        }
    }

    // MARK: Media
}
