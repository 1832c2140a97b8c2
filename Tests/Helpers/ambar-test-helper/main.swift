// A second process for multi-process tests: opens a store with the model it keeps and acts on it.
//
//   ambar-test-helper set <store> <object-uri> <key>=<value>... [--policy P]
//       values: s:<text>, d:<double>, i:<int>
//
// Exits 0 on success; prints the error and exits 1 otherwise.
import AmbarStack
import Foundation

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("ambar-test-helper: \(message)\n".utf8))
    exit(1)
}

func parse(_ text: Substring) -> AttributeValue? {
    let kind = text.prefix(2), body = String(text.dropFirst(2))
    switch kind {
    case "s:": return .string(body)
    case "d:": return Double(body).map { .double($0) }
    case "i:": return Int64(body).map { .integer($0) }
    default: return nil
    }
}

let arguments = CommandLine.arguments
guard arguments.count >= 4 else { fail("usage: set <store> <uri> key=value...") }
do {
    switch arguments[1] {
    case "set":
        let url = URL(fileURLWithPath: arguments[2])
        let model = try PersistentStoreCoordinator.storedModel(at: url)
        let coordinator = try PersistentStoreCoordinator(model: model, store: .sqlite(url))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "helper")
        let id = try coordinator.managedObjectID(forURIRepresentation: URL(string: arguments[3])!)
        let assignments = Array(arguments.dropFirst(4))
        try context.performAndWait { () throws(AmbarError) in
            let object = try context.existingObject(with: id)
            for assignment in assignments {
                let parts = assignment.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, let value = parse(parts[1]) else {
                    throw AmbarError.invalidPredicate("bad assignment '\(assignment)'")
                }
                try object.setValue(value, forKey: String(parts[0]))
            }
            try context.save()
        }
    default:
        fail("unknown command \(arguments[1])")
    }
} catch {
    fail("\(error)")
}
