import ArgumentParser

/// What a soak process does besides keeping its main context in step with the others.
enum WorkerRole: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// Only watches: a results controller over every item, realized, as a viewer would hold it.
    case watcher
    /// Upserts batches of random keys through an importer context.
    case importer
    /// Updates random items in its main context, and now and then a batch update.
    case updater
    /// Deletes random items through an importer context, or with a batch delete.
    case deleter
}
