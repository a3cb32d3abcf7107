import Glibc

/// A small file read whole (a configuration, a zone file, a file of /proc): the one read loop,
/// with EINTR retried and a size cap, so that `/dev/zero` given by mistake is refused.
public enum SmallFile {
    public struct ReadError: Error, Equatable {
        /// The errno; `EFBIG` for a file over the cap.
        public let code: Int32
        public var message: String { code == EFBIG ? "too large" : String(cString: strerror(code)) }
    }

    public static func read(_ path: String, limit: Int = 1 << 20) -> Result<[UInt8], ReadError> {
        let file: FileDescriptor
        do throws(Errno) {
            file = try FileDescriptor.open(path, O_RDONLY)
        } catch {
            return .failure(ReadError(code: error.code))
        }
        return readAll(file, limit: limit)
    }

    private static func readAll(_ file: borrowing FileDescriptor, limit: Int) -> Result<[UInt8], ReadError> {
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count: Int
            switch systemCall({ Glibc.read(file.rawValue, &chunk, chunk.count) }) {
            case .success(let read): count = read
            case .failure(let error): return .failure(ReadError(code: error.code))
            }
            if count == 0 { return .success(contents) }
            contents.append(contentsOf: chunk[..<count])
            guard contents.count <= limit else { return .failure(ReadError(code: EFBIG)) }
        }
    }
}
