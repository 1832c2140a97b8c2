// swift-tools-version:6.1
import CompilerPluginSupport
import Foundation
import PackageDescription

let package = Package(
    name: "Ambar",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "AmbarStack", targets: ["AmbarStack"]),
        .library(name: "AmbarModels", targets: ["AmbarModels"]),
        // SwiftData's API (`@Model` on plain classes, ModelContainer, ModelContext, FetchDescriptor,
        // @ModelActor, …): SwiftData code compiles here with only its import changed.
        .library(name: "AmbarSwiftData", targets: ["AmbarSwiftData"]),
        .library(name: "SharedStoreIPC", targets: ["SharedStoreIPC"]),
        .library(name: "AmbarPostgres", targets: ["AmbarPostgres"]),
        // systemd for your own daemons: Type=notify (READY, STATUS, WATCHDOG, STOPPING) as a
        // service-lifecycle Service, journald logging, socket activation. Needs libsystemd-dev.
        .library(name: "AmbarSystemd", targets: ["AmbarSystemd"]),
        .executable(name: "sync-agent", targets: ["SyncAgent"]),
    ],
    // What sync-agent builds in beyond SQLite. All are on by default (`swift build`, the tests,
    // the benchmarks); `scripts/run-demo` builds the SQLite demo with `--disable-default-traits`,
    // which spares a first build postgres-nio, two copies of BoringSSL, Hummingbird and
    // swift-prometheus. The libraries' own products (AmbarPostgres among them) do not depend on
    // traits.
    traits: [
        .trait(name: "PostgreSQL", description: "sync-agent opens stores on a PostgreSQL server (postgres-nio, swift-crypto)."),
        .trait(name: "HTTP", description: "sync-agent serve, and --metrics of hub, run, watch and serve (Hummingbird, swift-prometheus)."),
        .trait(name: "TLS", description: "sync-agent serve speaks HTTPS (swift-nio-ssl).", enabledTraits: ["HTTP"]),
        // For this package's own tests only: the test kits that build large modules (swift-syntax's
        // macro test support for the target, HummingbirdTesting with async-http-client).
        // `scripts/run-tsan` builds without it, and those suites then report themselves skipped.
        .trait(
            name: "TestKits",
            description: "This package's in-process macro and router tests (SwiftSyntaxMacrosTestSupport, HummingbirdTesting).",
            enabledTraits: ["HTTP"]
        ),
        .default(enabledTraits: ["PostgreSQL", "HTTP", "TLS", "TestKits"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.1"),
        // The HTTP change stream and API of `sync-agent serve`; no default traits (swift-configuration
        // is not needed).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        // Metrics: the libraries report through swift-metrics (nothing without a backend); the
        // agent exposes them in Prometheus's text format.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // Tracing: spans around saves, doorbells, ledger reads and merges (no-ops without a tracer).
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
    ],
    targets: [
        // AmbarStack, the object graph, in layers: each builds on its own, and those that do not
        // depend on each other build in parallel. The AmbarStack module only re-exports them.
        //
        // The core: model, objects, contexts, fetch and predicates, and the interface to a store.
        .target(
            name: "AmbarCore",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        // The SQL and save work the SQLite and PostgreSQL stores share.
        .target(name: "AmbarSQL", dependencies: ["AmbarCore"]),
        // The SQLite store, through GRDB.
        .target(
            name: "AmbarSQLite",
            dependencies: [
                "AmbarCore", "AmbarSQL",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Fetched-results controllers and monitors: live lists over a context.
        .target(
            name: "AmbarResults",
            dependencies: ["AmbarCore", .product(name: "Logging", package: "swift-log")]
        ),
        // Opening stores and stacks: DataStack, coordinators on a file or in memory, model files,
        // backups, restores and relocations.
        .target(
            name: "AmbarDataStack",
            dependencies: ["AmbarCore", "AmbarSQLite", .product(name: "Logging", package: "swift-log")]
        ),
        // The seed libraries' APIs (Ambar, BBLCoreDataKit, CoreDataStack, Y—Persistence), a layer
        // on the public and package API of the others.
        .target(
            name: "AmbarSeedCompatibility",
            dependencies: ["AmbarCore", "AmbarDataStack", "AmbarResults", .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "AmbarStack",
            dependencies: ["AmbarCore", "AmbarSQL", "AmbarSQLite", "AmbarResults", "AmbarDataStack", "AmbarSeedCompatibility"]
        ),
        // Models declared in their classes: the `@Model` macro and its companions. A library of
        // its own, so that only what uses them builds swift-syntax (not the agent, not the soak).
        .target(
            name: "AmbarModels",
            dependencies: ["AmbarStack", "AmbarMacros"]
        ),
        // SwiftData's API over the object graph, with its own `@Model` (in the same macro plugin).
        .target(
            name: "AmbarSwiftData",
            dependencies: ["AmbarStack", "AmbarMacros", "SharedStoreIPC", .product(name: "Logging", package: "swift-log")]
        ),
        // The compiler plugin: the entry point, and a type per macro named as the declarations
        // name it.
        .macro(
            name: "AmbarMacros",
            dependencies: [
                "AmbarMacroExpansions",
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ]
        ),
        // What the macros expand to, and their diagnostics: a library of its own, so that the
        // macro tests link it without building the plugin (and every module it leads to) again
        // for the host.
        .target(
            name: "AmbarMacroExpansions",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
            ]
        ),
        // The shared-memory doorbell's futex calls and atomics on a mapped file (C: the futex
        // system call is variadic).
        .target(name: "CSharedBell"),
        .target(
            name: "SharedStoreIPC",
            dependencies: [
                "AmbarCore", "AmbarSQLite", "AmbarDataStack",
                "CSharedBell",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        // The PostgreSQL store and its connection (postgres-nio): a store on a server, for several
        // hosts. Its own product, so that a SQLite-only user does not build it.
        .target(
            name: "AmbarPostgres",
            dependencies: [
                "AmbarCore", "AmbarSQL", "AmbarDataStack",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The NDJSON record format that `sync-agent import` and inboxes read (a library so that
        // the fuzzers can reach it).
        .target(
            name: "RecordImport",
            dependencies: ["AmbarCore"]
        ),
        // libsystemd, linked from the system (Debian: libsystemd-dev).
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"]), .yum(["systemd-devel"])]
        ),
        // systemd's side of a daemon (the agent's, or yours): notifications, watchdog, socket activation,
        // journald logging.
        .target(
            name: "AmbarSystemd",
            dependencies: [
                "CSystemd",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "SyncAgent",
            dependencies: [
                "AmbarCore", "AmbarSQLite", "AmbarDataStack", "AmbarResults",
                .target(name: "AmbarPostgres", condition: .when(traits: ["PostgreSQL"])),
                "SharedStoreIPC",
                "RecordImport",
                "AmbarSystemd",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["HTTP"])),
                .product(name: "HummingbirdCore", package: "hummingbird", condition: .when(traits: ["HTTP"])),
                .product(name: "HummingbirdTLS", package: "hummingbird", condition: .when(traits: ["TLS"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["TLS"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["HTTP"])),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras", condition: .when(traits: ["HTTP"])),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus", condition: .when(traits: ["HTTP"])),
            ]
        ),
        // examples/tracker's program, built here too so that its tests run it from the package's one
        // build (the example's own Package.swift is how a user builds it, with the same
        // dependencies; a test checks that the two agree).
        .executableTarget(
            name: "tracker",
            dependencies: [
                "AmbarModels", "SharedStoreIPC", "AmbarSystemd",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "examples/tracker/Sources/tracker"
        ),
        // A helper executable that tests spawn as a second process on the same store.
        .executableTarget(
            name: "ambar-test-helper",
            dependencies: [
                "AmbarStack", "SharedStoreIPC", "AmbarTestSupport", "AmbarPostgres",
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/Helpers/ambar-test-helper"
        ),
        // Models the SwiftData tests share with the process they start.
        .target(name: "SwiftDataSamples", dependencies: ["AmbarSwiftData"], path: "Tests/SwiftDataSamples"),
        // A second process on a shared store, through AmbarSwiftData.
        .executableTarget(
            name: "swiftdata-peer",
            dependencies: ["AmbarSwiftData", "SwiftDataSamples", "AmbarPostgres"],
            path: "Tests/Helpers/swiftdata-peer"
        ),
        .executableTarget(
            name: "ambar-bench",
            dependencies: [
                "AmbarStack", "AmbarModels", "AmbarSwiftData", "SharedStoreIPC", "AmbarPostgres",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Benchmarks/ambar-bench"
        ),
        // The chaos soak: processes on one store under load, killed and frozen (scripts/run-soak).
        .executableTarget(
            name: "ambar-soak",
            dependencies: [
                "AmbarStack", "SharedStoreIPC", "ProcessHarness",
                .product(name: "GRDBSQLite", package: "GRDB.swift"),  // a plain SQLite client holding the write lock
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Soak/ambar-soak"
        ),
        // The properties the fuzzers check, also replayed over the corpus by the tests.
        .target(
            name: "FuzzChecks",
            dependencies: [
                "AmbarStack", "SharedStoreIPC", "RecordImport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            path: "Fuzz/Sources/FuzzChecks"
        ),
        .target(
            name: "AmbarTestSupport",
            dependencies: ["AmbarStack", "SharedStoreIPC", "AmbarPostgres", "ProcessHarness"],
            path: "Tests/AmbarTestSupport"
        ),
        // Spawning and watching processes, and a raw peer of the hub: for the tests and the soak.
        .target(
            name: "ProcessHarness",
            dependencies: ["SharedStoreIPC"]
        ),
        .testTarget(
            name: "SharedStoreIPCTests",
            dependencies: [
                "SharedStoreIPC", "AmbarStack", "AmbarTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        // The macros expanded in process (assertMacroExpansion), diagnostics included.
        .testTarget(
            name: "AmbarMacrosTests",
            dependencies: [
                .target(name: "AmbarMacroExpansions", condition: .when(traits: ["TestKits"])),
                .product(name: "SwiftSyntaxMacrosTestSupport", package: "swift-syntax", condition: .when(traits: ["TestKits"])),
            ]
        ),
        .testTarget(
            name: "FuzzCorpusTests",
            dependencies: ["FuzzChecks", "RecordImport", "AmbarTestSupport"]
        ),
        .testTarget(
            name: "BenchmarkTests",
            dependencies: ["AmbarTestSupport"]
        ),
        .testTarget(
            name: "SyncAgentTests",
            dependencies: [
                "SyncAgent",  // the agent's service groups, in process
                "AmbarStack", "SharedStoreIPC", "AmbarTestSupport", "AmbarSystemd",
                .product(name: "GRDBSQLite", package: "GRDB.swift"),  // a second, plain SQLite client
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ]
        ),
        // serve's routes in process, through Hummingbird's test client (the server-level tests run
        // the sync-agent binary).
        .testTarget(
            name: "ServeRouterTests",
            dependencies: [
                "SyncAgent", "AmbarStack", "SharedStoreIPC", "AmbarTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HummingbirdTesting", package: "hummingbird", condition: .when(traits: ["TestKits"])),
            ]
        ),
        // SwiftData code as Apple's platforms compile it, with only its import changed.
        .testTarget(
            name: "AmbarSwiftDataTests",
            dependencies: ["AmbarSwiftData", "SwiftDataSamples", "AmbarTestSupport"]
        ),
        .testTarget(
            name: "AmbarStackTests",
            dependencies: [
                "AmbarStack",
                "AmbarModels",
                "AmbarPostgres",
                "AmbarTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            exclude: ["Fixtures"]  // model files the tests read by path
        ),
    ],
    swiftLanguageModes: [.v6]
)

// The libFuzzer targets exist only for `scripts/run-fuzz` (which sets AMBAR_FUZZ=1): libFuzzer
// supplies their `main`, so an ordinary build could not link them.
if ProcessInfo.processInfo.environment["AMBAR_FUZZ"] != nil {
    package.targets += [
        .target(name: "FuzzDriver", path: "Fuzz/Sources/FuzzDriver"),
        .executableTarget(name: "fuzz-wire", dependencies: ["FuzzChecks", "FuzzDriver"], path: "Fuzz/Sources/fuzz-wire"),
        .executableTarget(name: "fuzz-import-line", dependencies: ["FuzzChecks", "FuzzDriver", "RecordImport"], path: "Fuzz/Sources/fuzz-import-line"),
        .executableTarget(name: "fuzz-predicate-format", dependencies: ["FuzzChecks", "FuzzDriver"], path: "Fuzz/Sources/fuzz-predicate-format"),
    ]
}
