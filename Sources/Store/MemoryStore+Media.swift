import Carousel
import Definitions
import Threading
import TimeZones

extension MemoryStore: MediaStore {
    public func saveMedia(_ media: NewMedia, by attribution: Attribution) throws(StoreError) -> Bool {
        contents.withLock { contents in
            guard contents.media[media.id] == nil else { return false }
            var files: [MediaFile: [UInt8]] = [.original: media.original]
            for variant in media.variants { files[.variant(width: variant.width)] = variant.webp }
            contents.media[media.id] = (media.record, files)
            contents.append([AuditEntry(.uploadMedia, attribution, target: media.id)])
            return true
        }
    }

    public func mediaRecords(id: String?) throws(StoreError) -> [MediaRecord] {
        contents.withLock { media in
            guard let id else { return media.media.values.map(\.record) }
            return media.media[id].map { [$0.record] } ?? []
        }.sorted {
            ($0.createdAt, $0.id) < ($1.createdAt, $1.id)
        }
    }

    public func mediaBytes(of id: String, _ file: MediaFile) throws(StoreError) -> [UInt8]? {
        contents.withLock { $0.media[id]?.files[file] }
    }

    public func deleteMedia(_ id: String, by attribution: Attribution) throws(StoreError) -> MediaDeletion {
        contents.withLock { contents in
            guard contents.media[id] != nil else { return .notFound }
            let uses = contents.carousels.values.sorted { $0.name < $1.name }.flatMap {
                $0.definition.uses(ofImage: id)
            }
            guard uses.isEmpty else { return .inUse(uses) }
            contents.media[id] = nil
            contents.append([AuditEntry(.deleteMedia, attribution, target: id)])
            return .deleted
        }
    }
}
