import AmbarCore
import Foundation
import Logging

/// A position in a results controller: a section and a row in it.
public struct ResultsIndexPath: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The section.
    public let section: Int
    /// The row within the section.
    public let row: Int

    /// Creates an index path.
    public init(row: Int, section: Int) {
        self.row = row
        self.section = section
    }

    public static func < (a: ResultsIndexPath, b: ResultsIndexPath) -> Bool {
        (a.section, a.row) < (b.section, b.row)
    }

    public var description: String { "[\(section), \(row)]" }
}

/// One change a results controller reports.
public enum ResultsChange: Sendable, Hashable {
    /// An object entered the results at this (new) position.
    case insert(ManagedObjectID, at: ResultsIndexPath)
    /// An object left the results from this (old) position.
    case delete(ManagedObjectID, at: ResultsIndexPath)
    /// An object changed and moved in the order.
    case move(ManagedObjectID, from: ResultsIndexPath, to: ResultsIndexPath)
    /// An object changed in place (its old position).
    case update(ManagedObjectID, at: ResultsIndexPath)
    /// A section appeared at this (new) index (only for a controller with a
    /// `sectionNameKeyPath`; one without sections reports rows only, as Core Data's does).
    case insertSection(String, at: Int)
    /// A section disappeared from this (old) index (only for a controller with a
    /// `sectionNameKeyPath`).
    case deleteSection(String, at: Int)
}

/// A section of a results controller.
public struct ResultsSection<T: ManagedObject> {
    /// The section's name: the value of the section key path, rendered as text ("" when nil).
    public let name: String
    /// The section's objects, in order.
    public let objects: [T]
}

extension ResultsChange {
    /// Where the change is, for ordering changes: the new position of an insert or a move, the
    /// old one of a delete or an update, row 0 of a section.
    var sortKey: ResultsIndexPath {
        switch self {
        case .insert(_, let p), .delete(_, let p), .update(_, let p), .move(_, _, let p): return p
        case .insertSection(_, let i), .deleteSection(_, let i): return ResultsIndexPath(row: 0, section: i)
        }
    }
}
