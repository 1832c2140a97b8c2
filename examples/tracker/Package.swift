// swift-tools-version:6.1
// The task tracker: a writer, a viewer and a notifier process sharing one store, with the model
// declared in its classes (`@Model`) and queried with `#Predicate` and `SortDescriptor`.
//
//   swift run -c release tracker viewer DIR    # keeps a results controller over open tasks
//   swift run -c release tracker writer DIR    # imports, updates and deletes (--tasks, --done, --pace)
//   swift run -c release tracker notifier DIR --consumer NAME
//                                              # one Notice per task marked done, exactly once
import PackageDescription

let package = Package(
    name: "tracker",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Ambar", path: "../.."),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(
            name: "tracker",
            dependencies: [
                .product(name: "AmbarModels", package: "Ambar"),
                .product(name: "SharedStoreIPC", package: "Ambar"),
                .product(name: "AmbarSystemd", package: "Ambar"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
