import Foundation

#if canImport(SwiftData)
    import SwiftData
#else
    import AmbarSwiftData
#endif

// Models named like Swift's own types, as apps name them.
@Model final class Task {
    var title: String
    var done = false
    var group: Group?

    init(title: String) { self.title = title }
}

@Model final class Group {
    var name: String
    var tasks = [Task]()

    init(name: String) { self.name = name }
}
