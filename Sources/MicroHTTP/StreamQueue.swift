/// What a stream has queued for its client, and what its content reader does next: a value,
/// without libmicrohttpd, so the reader's decisions are tested on their own. `ResponseStream`
/// keeps one behind its lock.
struct StreamQueue {
    /// What the content reader should do.
    enum Take: Equatable {
        /// This many bytes were copied into the buffer.
        case bytes(Int)
        /// Nothing left, and nothing will come: end the body.
        case endOfStream
        /// Nothing queued yet: the reader must suspend the connection until `enqueue` wakes it
        /// (returning 0 without suspending would busy-loop: docs/ARCHITECTURE.md).
        case waitForMore
        /// The body cannot go on (a chunk was cut short on the socket): close the connection.
        case abort
    }

    /// Chunks not yet handed over; chunks are shared, not copied, between streams.
    private var chunks: [[UInt8]] = []
    /// How much of `chunks[0]` was already handed over.
    private var offset = 0
    private(set) var queuedBytes = 0
    /// No chunk is accepted any more; what is queued still goes out.
    private(set) var isFinished = false
    /// The connection must be closed rather than the body ended.
    private(set) var isAborted = false

    var isEmpty: Bool { chunks.isEmpty }

    /// Queues `chunk` unless the queue is finished. A chunk that would take the backlog past
    /// `limit` is refused and finishes the queue (a client that reads too slowly is cut off).
    mutating func enqueue(_ chunk: [UInt8], limit: Int) -> Bool {
        guard !isFinished else { return false }
        guard queuedBytes + chunk.count <= limit else {
            isFinished = true
            return false
        }
        chunks.append(chunk)
        queuedBytes += chunk.count
        return true
    }

    mutating func finish() {
        isFinished = true
    }

    /// Ends the body by closing the connection: what was written so far cannot be completed.
    mutating func abort() {
        discard()
        isFinished = true
        isAborted = true
    }

    /// Drops what is queued (the connection is gone).
    mutating func discard() {
        chunks.removeAll()
        offset = 0
        queuedBytes = 0
    }

    /// Removes and returns every queued chunk, whole (nothing of them handed over yet).
    mutating func takeAll() -> [[UInt8]] {
        precondition(offset == 0, "part of a chunk was handed over already")
        defer { discard() }
        return chunks
    }

    /// Offers the queued bytes to `write`, a chunk at a time, until it takes less than it was
    /// offered (the socket is full) or nothing is left; what it took is dropped. `write` returns
    /// how many bytes it took, or -1 when it failed: then false.
    mutating func drain(_ write: (UnsafeRawBufferPointer) -> Int) -> Bool {
        while !chunks.isEmpty {
            let chunk = chunks[0]
            let offered = chunk.count - offset
            let taken = chunk.withUnsafeBytes { write(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
            guard taken >= 0 else { return false }
            offset += taken
            queuedBytes -= taken
            if offset == chunk.count {
                chunks.removeFirst()
                offset = 0
            }
            if taken < offered { return true }
        }
        return true
    }

    /// Copies as much as fits into `buffer`, across chunks.
    mutating func take(into buffer: UnsafeMutableRawBufferPointer) -> Take {
        var written = 0
        while written < buffer.count, !chunks.isEmpty {
            let chunk = chunks[0]
            let count = min(buffer.count - written, chunk.count - offset)
            chunk.withUnsafeBytes { bytes in
                buffer.baseAddress!.advanced(by: written).copyMemory(
                    from: bytes.baseAddress!.advanced(by: offset), byteCount: count)
            }
            written += count
            offset += count
            queuedBytes -= count
            if offset == chunk.count {
                chunks.removeFirst()
                offset = 0
            }
        }
        if written > 0 { return .bytes(written) }
        if isAborted { return .abort }
        return isFinished ? .endOfStream : .waitForMore
    }
}
