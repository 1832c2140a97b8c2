// SwiftData's API on Ambar: model and data code written for SwiftData compiles here with only
// its import changed, and its stores are Ambar stores (SQLite, in memory, or shared between
// processes).
//
//     #if canImport(SwiftData)
//     import SwiftData
//     #else
//     import AmbarSwiftData
//     #endif
//
// Like SwiftData, the module brings Foundation (`Date`, `#Predicate`, `SortDescriptor`) and
// Observation with it.
@_exported import Foundation
@_exported import Observation
