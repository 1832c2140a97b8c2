import Foundation

#if canImport(SwiftData)
    import SwiftData
#else
    import AmbarSwiftData
#endif

// Xcode's SwiftData template, with an identifier of the app's own.
@Model
final class Item {
    var id = UUID()
    var timestamp: Date

    init(timestamp: Date) {
        self.timestamp = timestamp
    }
}
