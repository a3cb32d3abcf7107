import Glibc
import Platform
import Testing

/// Each is seen from the other end of a pipe, not by its number: another test running at the same
/// time may be given a closed number at once.
@Suite("File descriptors")
struct FileDescriptorTests {
    /// What a non-blocking read of `reader` says of the write end: still open (EAGAIN), or closed (end of file).
    static func writeEndIsOpen(_ reader: borrowing FileDescriptor) -> Bool {
        _ = fcntl(reader.rawValue, F_SETFL, O_NONBLOCK)
        var byte: UInt8 = 0
        let read = Glibc.read(reader.rawValue, &byte, 1)
        return read < 0 && errno == EAGAIN
    }

    @Test func closedOnceWhenCloseIsCalled() throws {
        let pipe = try Pipe()
        let reader = pipe.read
        let writer = pipe.write
        let open = Self.writeEndIsOpen(reader)
        #expect(open)
        writer.close()
        let stillOpen = Self.writeEndIsOpen(reader)
        #expect(!stillOpen)
    }

    @Test func closedWhenItsOwnerLetsItGo() throws {
        let pipe = try Pipe()
        let reader = pipe.read
        let writer = pipe.write
        do {
            let owner = writer
            let open = Self.writeEndIsOpen(reader)
            #expect(open)
            _ = owner
        }
        let stillOpen = Self.writeEndIsOpen(reader)
        #expect(!stillOpen)
    }

    @Test func releasedItIsLeftOpenForWhoeverTookIt() throws {
        let pipe = try Pipe()
        let reader = pipe.read
        let writer = pipe.write
        let raw = writer.release()
        let open = Self.writeEndIsOpen(reader)
        #expect(open)
        close(raw)
        let stillOpen = Self.writeEndIsOpen(reader)
        #expect(!stillOpen)
    }

    @Test func openSaysWhyItFailed() {
        #expect(throws: Errno(ENOENT)) { try FileDescriptor.open("/nonexistent/file", O_RDONLY).close() }
        #expect(throws: Never.self) { try FileDescriptor.open("/dev/null", O_RDONLY).close() }
    }
}
