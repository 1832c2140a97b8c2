// AmbarStack is the whole object graph for users: it re-exports its layers, each a module that
// builds on its own (and, where they do not depend on each other, in parallel).
//
//   AmbarCore               model, objects, contexts, fetch and predicates, the store interface
//   AmbarSQL                SQL and save work shared by the SQLite and PostgreSQL stores (package
//                           API only: nothing of it to re-export)
//   AmbarSQLite             the SQLite store (GRDB)
//   AmbarResults            fetched-results controllers and monitors
//   AmbarDataStack          opening stores and stacks: DataStack, model files, backups, restores
//   AmbarSeedCompatibility  the seed libraries' APIs, on the public and package API of the above

@_exported import AmbarCore
@_exported import AmbarDataStack
@_exported import AmbarResults
@_exported import AmbarSQLite
@_exported import AmbarSeedCompatibility
