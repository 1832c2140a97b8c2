// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Ambar",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "AmbarStack", targets: ["AmbarStack"]),
        .library(name: "SharedStoreIPC", targets: ["SharedStoreIPC"]),
        .executable(name: "sync-agent", targets: ["SyncAgent"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
    ],
    targets: [
        .target(
            name: "AmbarStack",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "SharedStoreIPC",
            dependencies: [
                "AmbarStack",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "SyncAgent",
            dependencies: [
                "AmbarStack",
                "SharedStoreIPC",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // A helper executable that tests spawn as a second process on the same store.
        .executableTarget(
            name: "ambar-test-helper",
            dependencies: [
                "AmbarStack", "SharedStoreIPC",
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/Helpers/ambar-test-helper"
        ),
        .executableTarget(
            name: "ambar-quickbench",
            dependencies: [
                "AmbarStack",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            path: "Benchmarks/ambar-quickbench"
        ),
        .executableTarget(
            name: "ambar-ipc-bench",
            dependencies: ["AmbarStack", "SharedStoreIPC", .product(name: "Logging", package: "swift-log")],
            path: "Benchmarks/ambar-ipc-bench"
        ),
        .target(
            name: "AmbarTestSupport",
            dependencies: ["AmbarStack"],
            path: "Tests/AmbarTestSupport"
        ),
        .testTarget(
            name: "SharedStoreIPCTests",
            dependencies: ["SharedStoreIPC", "AmbarStack", "AmbarTestSupport"]
        ),
        .testTarget(
            name: "SyncAgentTests",
            dependencies: ["AmbarStack", "AmbarTestSupport"]
        ),
        .testTarget(
            name: "AmbarStackTests",
            dependencies: [
                "AmbarStack",
                "AmbarTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
