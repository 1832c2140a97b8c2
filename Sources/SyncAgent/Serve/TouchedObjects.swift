// Built with the package trait HTTP (a default trait).
#if HTTP
    import AmbarCore
    import Foundation

    /// The objects a page of transactions touched, each read and encoded at most once however
    /// many audiences of change streams the page is for (``StreamAudience``).
    ///
    /// Used on its reader's queue only, inside one `performAndWait`, after the reader was reset:
    /// the values are those of the store at the read, at least as new as the page.
    final class TouchedObjects {
        /// One object, as read.
        enum Read {
            /// It exists: the object (for a filter's predicate) and its JSON as `fetch --json`
            /// prints it.
            case found(ManagedObject, json: String)
            /// It was deleted since.
            case missing
            /// Its values could not be read (the store's reason).
            case unreadable(AmbarError)
            /// Its values could not be encoded as JSON.
            case unencodable(String)
        }

        let reader: ManagedObjectContext
        private var reads: [ManagedObjectID: Read] = [:]

        /// Reads in `reader`, which the caller has reset and whose queue it is on.
        init(reader: ManagedObjectContext) { self.reader = reader }

        /// The object `id` as read, read the first time it is asked for.
        func read(_ id: ManagedObjectID) -> Read {
            if let known = reads[id] { return known }
            let read: Read
            do throws(AmbarError) {
                let object = try reader.existingObject(with: id)
                let fields = try ObjectJSON.fields(object)
                do {
                    read = .found(object, json: try ChangeStreamEndpoint.json(fields))
                } catch {
                    read = .unencodable("\(error)")
                }
            } catch .objectNotFound {
                read = .missing
            } catch {
                read = .unreadable(error)
            }
            reads[id] = read
            return read
        }
    }
#endif
