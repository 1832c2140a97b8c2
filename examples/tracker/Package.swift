// swift-tools-version:6.1
// The task tracker: a writer and a viewer process sharing one store, with the model declared in
// its classes (`@Model`) and queried with `#Predicate` and `SortDescriptor`.
//
//   swift run -c release tracker viewer DIR    # keeps a results controller over open tasks
//   swift run -c release tracker writer DIR    # imports, updates and deletes
import PackageDescription

let package = Package(
    name: "tracker",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Ambar", path: "../..")
    ],
    targets: [
        .executableTarget(
            name: "tracker",
            dependencies: [
                .product(name: "AmbarModels", package: "Ambar"),
                .product(name: "SharedStoreIPC", package: "Ambar"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
