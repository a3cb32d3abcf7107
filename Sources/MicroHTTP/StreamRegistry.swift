import CMicroHTTPD
import Locking

/// The response streams the server has open, so that a stop can end them all (their connections
/// may be suspended in the content reader, and must not outlive the daemon). A stream leaves the
/// registry when libmicrohttpd releases its response.
final class StreamRegistry: Sendable {
    private let open = Lock(OpenStreams())

    private struct OpenStreams {
        var streams: [ObjectIdentifier: ResponseStream] = [:]
        var stopping = false
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

    /// Queues `stream` as the response on `connection`; nil when the server is stopping (the
    /// stream is then finished, and the caller answers otherwise).
    func start(_ stream: ResponseStream, on connection: OpaquePointer) -> MHD_Result? {
        let accepted = open.withLock { open in
            guard !open.stopping else { return false }
            open.streams[ObjectIdentifier(stream)] = stream
            return true
        }
        guard accepted else {
            stream.finish()
            return nil
        }
        stream.attach(to: connection)
        _ = cmhd_disable_connection_timeout(connection)  // heartbeats find dead subscribers instead
        let binding = Unmanaged.passRetained(Binding(stream: stream, registry: self)).toOpaque()
        // MHD_SIZE_UNKNOWN: chunked transfer encoding; 4 KiB reads fit the connection's pool.
        guard let response = MHD_create_response_from_callback(UInt64.max, 4096, readStream, binding, releaseStream)
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

    /// libmicrohttpd released a stream's response: its connection is done with it.
    func closed(_ stream: ResponseStream) {
        open.withLock { _ = $0.streams.removeValue(forKey: ObjectIdentifier(stream)) }
        stream.close()
    }

    /// Ends every open stream and refuses new ones (the first step of a graceful stop).
    func finishAll() {
        let streams = open.withLock { open in
            open.stopping = true
            return Array(open.streams.values)
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
    return binding.stream.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: capacity))
}

private let releaseStream: MHD_ContentReaderFreeCallback = { context in
    guard let context else { return }
    let binding = Unmanaged<StreamRegistry.Binding>.fromOpaque(context).takeRetainedValue()
    binding.registry.closed(binding.stream)
}
