import CMicroHTTPD
import Dispatch
import Synchronization
import Threading

/// Every response stream open on a server, in named groups: the one registry of open streams.
/// Whoever builds the service makes it and hands it to the `HTTPServer`, which ends every stream
/// when it stops (their connections may be suspended in the content reader and must not outlive
/// the daemon), and to whoever broadcasts, which sends to a group (the event hub). A stream
/// leaves the registry when libmicrohttpd releases its response.
public final class StreamRegistry: Sendable {
    private let open = Lock(OpenStreams())

    private struct OpenStreams {
        var groups: [String: Group] = [:]
        /// The group of each open stream.
        var membership: [ObjectIdentifier: String] = [:]
        var stopping = false

        mutating func insert(_ stream: ResponseStream, into group: String) {
            groups[group, default: Group()].insert(stream)
            membership[ObjectIdentifier(stream)] = group
        }

        mutating func remove(_ stream: ResponseStream) {
            guard let name = membership.removeValue(forKey: ObjectIdentifier(stream)) else { return }
            groups[name]?.remove(stream)
            if groups[name]?.streams.isEmpty == true { groups[name] = nil }
        }
    }

    /// One group's streams, in an array that a broadcast walks as it is (no copy of 10,000
    /// references, each retained and released); each stream's place in it, so that one leaves in
    /// constant time.
    private struct Group {
        private(set) var streams: [ResponseStream] = []
        private var places: [ObjectIdentifier: Int] = [:]

        mutating func insert(_ stream: ResponseStream) {
            places[ObjectIdentifier(stream)] = streams.count
            streams.append(stream)
        }

        /// The last stream moves into the gap.
        mutating func remove(_ stream: ResponseStream) {
            guard let place = places.removeValue(forKey: ObjectIdentifier(stream)) else { return }
            let last = streams.removeLast()
            guard place < streams.count else { return }
            streams[place] = last
            places[ObjectIdentifier(last)] = place
        }
    }

    /// Streams a handler returns without adding them to a group first.
    static let ungrouped = ""

    public init() {}

    /// Adds `stream` to `group` and queues `first` on it in the same step, so that no broadcast
    /// to the group can come between the two. False once the server is stopping: the stream is
    /// then finished (and the server answers its request 503).
    @discardableResult
    public func add(_ stream: ResponseStream, to group: String, first: [UInt8]) -> Bool {
        let added = open.withLock { open in
            guard !open.stopping else { return false }
            open.insert(stream, into: group)
            stream.send(first)
            return true
        }
        if !added { stream.finish() }
        return added
    }

    /// Queues `chunk` on every stream of `group`. A stream whose client went away finds out at
    /// this send and closes.
    public func broadcast(_ chunk: [UInt8], to group: String) {
        let framed = FramedChunk(chunk)
        open.withLock { open in
            guard let streams = open.groups[group]?.streams else { return }
            Self.send(framed, to: streams)
        }
    }

    /// Subscribers per writing thread below which one thread writes them all.
    private static let streamsPerWriter = 512
    /// Streams a writing thread takes at a time from those left: a thread whose core is also busy
    /// with something else (a read, a proxy in front) takes fewer, and all finish together.
    private static let streamsPerTake = 64
    private static let writers = ServerConfiguration.onlineCores

    /// One write per stream, on every core at once when there are many: each write is mostly the
    /// kernel's work, which runs in parallel on different sockets (docs/ARCHITECTURE.md).
    private static func send(_ chunk: FramedChunk, to streams: [ResponseStream]) {
        let workers = min(writers, streams.count / streamsPerWriter)
        guard workers > 1 else {
            send(chunk, to: streams[...])
            return
        }
        let taken = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            while true {
                let start = taken.wrappingAdd(streamsPerTake, ordering: .relaxed).oldValue
                guard start < streams.count else { return }
                send(chunk, to: streams[start..<min(start + streamsPerTake, streams.count)])
            }
        }
    }

    /// The array holds every stream for the whole loop: touching each one's reference count too
    /// would cost a write to one more cold cache line per subscriber.
    private static func send(_ chunk: FramedChunk, to streams: ArraySlice<ResponseStream>) {
        streams.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: Unmanaged<ResponseStream>.self) { streams in
                for stream in streams { _ = stream._withUnsafeGuaranteedRef { $0.send(chunk) } }
            }
        }
    }

    /// Queues `chunk` on every open stream, whatever its group (a heartbeat).
    public func broadcastToAll(_ chunk: [UInt8]) {
        let framed = FramedChunk(chunk)
        open.withLock { open in
            for group in open.groups.values { Self.send(framed, to: group.streams) }
        }
    }

    /// Ends the streams of `group` (what they followed is gone); their clients see the end.
    public func finish(group: String) {
        let streams = open.withLock { $0.groups[group]?.streams ?? [] }
        for stream in streams { stream.finish() }
    }

    /// Streams open in `group` now.
    public func count(in group: String) -> Int {
        open.withLock { $0.groups[group]?.streams.count ?? 0 }
    }

    /// Streams open now, in every group.
    public var count: Int {
        open.withLock { $0.membership.count }
    }

    /// Streams open now, by who holds their connection: the acceptor (on its own socket) or
    /// libmicrohttpd (docs/ARCHITECTURE.md). Takes every stream's lock: for a scrape, not a request.
    public var countByHolder: (ownSocket: Int, libmicrohttpd: Int) {
        open.withLock { open in
            let own = open.groups.values.reduce(0) { total, group in
                total + group.streams.reduce(0) { $0 + ($1.isOnOwnSocket ? 1 : 0) }
            }
            return (own, open.membership.count - own)
        }
    }

    /// What libmicrohttpd's content-reader callbacks get as their context.
    final class Binding {
        let stream: ResponseStream
        let registry: StreamRegistry

        init(stream: ResponseStream, registry: StreamRegistry) {
            self.stream = stream
            self.registry = registry
        }
    }

    /// Queues `stream` as the response on `connection` (adding it to the registry if the handler
    /// did not); nil when the server is stopping (the stream is then finished, and the caller
    /// answers otherwise).
    func start(_ stream: ResponseStream, on connection: OpaquePointer) -> MHD_Result? {
        guard admit(stream) else { return nil }
        stream.attach(to: connection)
        _ = cmhd_disable_connection_timeout(connection)  // heartbeats find dead subscribers instead
        let binding = Unmanaged.passRetained(Binding(stream: stream, registry: self)).toOpaque()
        // MHD_SIZE_UNKNOWN: chunked transfer encoding. Each response holds a buffer of the read size
        // for as long as its subscriber stays: 1 KiB fits an event and costs 3 KiB less per idle
        // subscriber than 4 KiB did (docs/PERFORMANCE.md); most events go out directly anyway.
        guard let response = MHD_create_response_from_callback(UInt64.max, 1024, readStream, binding, releaseStream)
        else {
            Unmanaged<Binding>.fromOpaque(binding).release()
            closed(stream)
            return MHD_Result.NO
        }
        for header in stream.headers {
            _ = MHD_add_response_header(response, header.name, header.value)
        }
        let result = MHD_queue_response(connection, UInt32(stream.status), response)
        MHD_destroy_response(response)  // the connection holds its own reference until it is done
        return result
    }

    /// Holds `stream` on the acceptor's `socket`, writing `head` first (adding the stream to the
    /// registry if the handler did not); false when the server is stopping (the stream is then
    /// finished, and the caller closes the socket).
    func start(_ stream: ResponseStream, on socket: ResponseStream.OwnSocket, head: [UInt8]) -> Bool {
        guard admit(stream) else { return false }
        stream.attach(to: socket, head: head)
        return true
    }

    /// Adds `stream` to the registry if the handler did not; false, and the stream finished,
    /// when the server is stopping.
    private func admit(_ stream: ResponseStream) -> Bool {
        let accepted = open.withLock { open in
            guard !open.stopping else { return false }
            if open.membership[ObjectIdentifier(stream)] == nil { open.insert(stream, into: Self.ungrouped) }
            return true
        }
        if !accepted { stream.finish() }
        return accepted
    }

    /// A stream's connection is done with it: libmicrohttpd released its response, or the
    /// acceptor's socket was closed.
    func closed(_ stream: ResponseStream) {
        open.withLock { $0.remove(stream) }
        stream.close()
    }

    /// Ends every open stream and refuses new ones (the first step of a graceful stop).
    func finishAll() {
        let streams = open.withLock { open in
            open.stopping = true
            return open.groups.values.flatMap(\.streams)
        }
        for stream in streams { stream.finish() }
    }
}

// MARK: - Content-reader callbacks (their context is a retained StreamRegistry.Binding)

/// Copies what the stream has queued; with nothing queued, suspends the connection and returns 0
/// (returning 0 without suspending would busy-loop: docs/ARCHITECTURE.md).
private let readStream: MHD_ContentReaderCallback = { context, _, buffer, capacity in
    guard let context, let buffer else { return -2 }  // MHD_CONTENT_READER_END_WITH_ERROR
    let binding = Unmanaged<StreamRegistry.Binding>.fromOpaque(context).takeUnretainedValue()
    return CallbackScope.run {
        binding.stream.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: capacity))
    }
}

private let releaseStream: MHD_ContentReaderFreeCallback = { context in
    guard let context else { return }
    let binding = Unmanaged<StreamRegistry.Binding>.fromOpaque(context).takeRetainedValue()
    binding.registry.closed(binding.stream)
}
