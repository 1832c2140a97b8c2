import Foundation
import RecordImport

/// Reads NDJSON input line by line, from a file or standard input, counting lines and bytes.
///
/// Memory is bounded: a line longer than ``maximumLineBytes`` is not held — it is read past and
/// reported as a line error (``ImportLineError``), and reading continues at the next line. Each
/// byte is scanned once.
final class LineSource {
    private let handle: FileHandle
    private var buffer = Data()
    /// Where the unread part of `buffer` starts, and how far it is known to hold no newline.
    private var start = 0
    private var scanned = 0
    private var finished = false
    /// The number of the last line returned (1-based).
    private(set) var lineNumber = 0
    /// Bytes consumed so far.
    private(set) var bytesRead = 0
    /// The input's size when it is a regular file (for progress), else `nil`.
    let totalBytes: Int?
    /// The longest line accepted, in bytes.
    let maximumLineBytes: Int

    /// The default longest line: 1 MiB.
    static let defaultMaximumLineBytes = 1 << 20

    /// Reads `path`, or standard input for `-`.
    init(path: String, maximumLineBytes: Int = LineSource.defaultMaximumLineBytes) throws {
        self.maximumLineBytes = maximumLineBytes
        if path == "-" {
            handle = .standardInput
            totalBytes = nil
        } else {
            guard FileManager.default.fileExists(atPath: path) else {
                throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: path])
            }
            handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            // try?: only for progress: the size is unknown when it cannot be read
            totalBytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
        }
    }

    /// What the next call found: a line, or a line too long to hold.
    enum Line {
        case text(number: Int, Data)
        case tooLong(ImportLineError)
    }

    /// The next non-blank line and its number, or `nil` at the end of the input.
    ///
    /// - Throws: ``ImportLineError`` for a line longer than ``maximumLineBytes`` (reading can
    ///   continue after it), or the error reading the input.
    func next() throws -> (number: Int, text: Data)? {
        while let line = try nextLine() {
            switch line {
            case .text(let number, let text):
                if text.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
                return (number, text)
            case .tooLong(let error):
                throw error
            }
        }
        return nil
    }

    private func nextLine() throws -> Line? {
        while true {
            let unread = buffer.count - start
            if let newline = buffer[(start + scanned)...].firstIndex(of: 0x0A) {
                let line = buffer[start..<newline]
                start = newline + 1
                scanned = 0
                compact()
                lineNumber += 1
                guard line.count <= maximumLineBytes else { return .tooLong(tooLong(lineNumber)) }
                return .text(number: lineNumber, Data(line))
            }
            scanned = unread
            if unread > maximumLineBytes { return .tooLong(try skipLongLine()) }
            if finished {
                guard unread > 0 else { return nil }
                let line = buffer[start...]
                start = buffer.count
                scanned = 0
                compact()
                lineNumber += 1
                guard line.count <= maximumLineBytes else { return .tooLong(tooLong(lineNumber)) }
                return .text(number: lineNumber, Data(line))
            }
            try fill()
        }
    }

    /// Reads past the rest of a line that is too long, keeping none of it.
    private func skipLongLine() throws -> ImportLineError {
        lineNumber += 1
        let error = tooLong(lineNumber)
        buffer.removeAll(keepingCapacity: true)
        start = 0
        scanned = 0
        while !finished {
            try fill()
            if let newline = buffer.firstIndex(of: 0x0A) {
                start = newline + 1
                compact()
                return error
            }
            buffer.removeAll(keepingCapacity: true)
        }
        return error
    }

    private func tooLong(_ line: Int) -> ImportLineError {
        ImportLineError(line: line, field: nil, reason: "the line is longer than \(maximumLineBytes) bytes (the maximum line length); it was not read")
    }

    private func fill() throws {
        let chunk = try handle.read(upToCount: 1 << 16) ?? Data()
        if chunk.isEmpty {
            finished = true
        } else {
            bytesRead += chunk.count
            buffer.append(chunk)
        }
    }

    /// Drops what was read once it is most of the buffer, so the buffer holds at most about one
    /// line and one chunk.
    private func compact() {
        guard start > 0, start >= buffer.count / 2 else { return }
        buffer.removeSubrange(buffer.startIndex..<(buffer.startIndex + start))
        start = 0
    }
}
