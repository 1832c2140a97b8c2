import Foundation

/// Reads NDJSON input line by line, from a file or standard input, counting lines and bytes.
final class LineSource {
    private let handle: FileHandle
    private var buffer = Data()
    private var finished = false
    /// The number of the last line returned (1-based).
    private(set) var lineNumber = 0
    /// Bytes consumed so far.
    private(set) var bytesRead = 0
    /// The input's size when it is a regular file (for progress), else `nil`.
    let totalBytes: Int?

    /// Reads `path`, or standard input for `-`.
    init(path: String) throws {
        if path == "-" {
            handle = .standardInput
            totalBytes = nil
        } else {
            guard FileManager.default.fileExists(atPath: path) else {
                throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: path])
            }
            handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            totalBytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
        }
    }

    /// The next non-blank line and its number, or `nil` at the end of the input.
    func next() throws -> (number: Int, text: Data)? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = buffer[buffer.startIndex..<newline]
                buffer.removeSubrange(buffer.startIndex...newline)
                lineNumber += 1
                if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
                return (lineNumber, Data(line))
            }
            if finished {
                guard !buffer.isEmpty else { return nil }
                let line = buffer
                buffer = Data()
                lineNumber += 1
                if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return nil }
                return (lineNumber, line)
            }
            let chunk = try handle.read(upToCount: 1 << 16) ?? Data()
            if chunk.isEmpty { finished = true } else { bytesRead += chunk.count; buffer.append(chunk) }
        }
    }
}
