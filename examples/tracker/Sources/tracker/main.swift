import Foundation

// tracker writer DIR | tracker viewer DIR
let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 2, let role = arguments.first, let path = arguments.last, ["writer", "viewer"].contains(role) else {
    FileHandle.standardError.write(Data("usage: tracker writer DIR | tracker viewer DIR\n".utf8))
    exit(64)
}
let directory = URL(fileURLWithPath: path, isDirectory: true)
do {
    if role == "writer" { try await Writer.run(directory: directory) } else { try await Viewer.run(directory: directory) }
} catch {
    FileHandle.standardError.write(Data("tracker: \(error)\n".utf8))
    exit(1)
}

/// Prints `line` at once, also into a file or a pipe (where `print` would hold it until exit).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
