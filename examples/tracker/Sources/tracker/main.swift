import Foundation

let usage = """
    usage: tracker writer DIR [--tasks N] [--done M] [--pace SAVES_PER_SECOND]
           tracker viewer DIR
           tracker notifier DIR --consumer NAME

    """
let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 2, ["writer", "viewer", "notifier"].contains(arguments[0]) else { refuse("") }
let directory = URL(fileURLWithPath: arguments[1], isDirectory: true)
var options: [String: String] = [:]
var rest = arguments.dropFirst(2)
while let flag = rest.popFirst() {
    guard flag.hasPrefix("--"), let value = rest.popFirst() else { refuse("expected --option VALUE, not \(flag)") }
    options[String(flag.dropFirst(2))] = value
}
do {
    switch arguments[0] {
    case "writer":
        var writer = Writer.Options()
        writer.tasks = try number(options.removeValue(forKey: "tasks"), default: 50)
        writer.done = try number(options.removeValue(forKey: "done"), default: 10)
        writer.pace = try options.removeValue(forKey: "pace").map { text in
            guard let pace = Double(text), pace > 0, pace.isFinite else { throw Refusal("--pace takes a positive number of saves a second, not \(text)") }
            return pace
        }
        guard writer.done <= writer.tasks else { throw Refusal("--done \(writer.done) is more than --tasks \(writer.tasks)") }
        try checkNoneLeft(options)
        try await Writer.run(directory: directory, options: writer)
    case "viewer":
        try checkNoneLeft(options)
        try await Viewer.run(directory: directory)
    default:
        guard let name = options.removeValue(forKey: "consumer") else { throw Refusal("the notifier needs --consumer NAME") }
        try checkNoneLeft(options)
        try await Notifier.run(directory: directory, consumer: name)
    }
} catch let refusal as Refusal {
    refuse(refusal.message)
} catch {
    FileHandle.standardError.write(Data("tracker: \(error)\n".utf8))
    exit(1)
}

/// A bad command line: what is wrong, then the usage.
struct Refusal: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

func refuse(_ message: String) -> Never {
    FileHandle.standardError.write(Data(((message.isEmpty ? "" : "tracker: \(message)\n") + usage).utf8))
    exit(64)
}

func number(_ text: String?, default value: Int) throws -> Int {
    guard let text else { return value }
    guard let number = Int(text), number >= 0 else { throw Refusal("expected a whole number, not \(text)") }
    return number
}

func checkNoneLeft(_ options: [String: String]) throws {
    if let unknown = options.keys.sorted().first { throw Refusal("unknown option --\(unknown)") }
}

/// Prints `line` at once, also into a file or a pipe (where `print` would hold it until exit).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
