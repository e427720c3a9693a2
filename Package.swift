// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "FairPlayKSM",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "ksm", targets: ["ksm"]),
        .library(name: "FairPlay", targets: ["FairPlay"]),
        .library(name: "FairPlayDevice", targets: ["FairPlayDevice"]),
        // The worker as a library, so a platform can embed it and bootstrap its own logging,
        // metrics and tracing (docs/fleet.md, "Embedding the worker").
        .library(name: "KSMService", targets: ["KSMService"]),
        .library(name: "KSMOperations", targets: ["KSMOperations"]),
        .library(name: "Licensing", targets: ["Licensing"]),
        .library(name: "RedisStore", targets: ["RedisStore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        // Deque for every FIFO (already built for swift-service-lifecycle's async-algorithms).
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/swift-extras/swift-extras-base64", from: "1.2.0"),
        // The admin port (/healthz, /readyz, /metrics): HTTP/1.1 on swift-nio, a ServiceLifecycle Service.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        // NIOCore's IOError, to name a bind failure's reason (already built for hummingbird).
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        // `ksm speke`'s native TLS (through HummingbirdHTTP2): PEM files read, and a certificate and key
        // checked to belong together at start-up (already built for swift-otel's HTTP client).
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // Metrics API for the worker; `ksm serve` bootstraps it to a Prometheus registry.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // `ksm serve`'s layered configuration (flags > environment > JSON file); default traits (JSON).
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0"),
        // Tracing: swift-otel's tracer, batch span processor, sampler, W3C propagator and OTLP/HTTP
        // exporter. Only the OTLPHTTP trait: the gRPC exporter would build grpc-swift for a
        // transport the deployments do not use (docs/operations.md, "Tracing").
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
        // W3C trace-context parsing for the pass-through with tracing off (swift-otel's own dependency).
        .package(url: "https://github.com/swift-otel/swift-w3c-trace-context", from: "1.0.0"),
        // Test-only: the deployment manifests are read as YAML to run their `ksm` command lines.
        .package(url: "https://github.com/jpsim/Yams", from: "5.0.1"),
        // The `generate-documentation` command plugin (`swift package generate-documentation --target
        // <product>`, docs/commands.md), used by no target: it renders the DocC catalogues.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // `ksm loadgen --http` and `ksm bench http`: the ecosystem's HTTP client drives an edge as players
        // do (HTTP/1.1 keep-alive, a pool sized to the concurrency); already built for swift-otel's exporter.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        // C libraries from Debian, as system-library targets (module map + shim header only).
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CRdKafka",
            pkgConfig: "rdkafka",
            providers: [.apt(["librdkafka-dev"])]
        ),
        .systemLibrary(
            name: "CHiredis",
            pkgConfig: "hiredis",
            providers: [.apt(["libhiredis-dev"])]
        ),
        // The `ksm` executable allocates with jemalloc (docs/performance.md: glibc's per-thread
        // arenas grew and shrank under a storm, a tenth of the worker's non-RSA time).
        .systemLibrary(
            name: "CJemalloc",
            pkgConfig: "jemalloc",
            providers: [.apt(["libjemalloc-dev"])]
        ),

        // The one way the project starts an OS thread for blocking work (docs/worker.md, "Threads").
        .target(name: "OwnedThreads"),
        // The one way the project binds a loopback port: a test server's free port, a mock broker's return.
        .target(name: "Loopback"),
        // Wire formats shared by every layer: JSON parser and writer, base64, hex.
        .target(name: "Wire", dependencies: [.product(name: "ExtrasBase64", package: "swift-extras-base64")]),
        // The protocol: pure and synchronous, OpenSSL for every primitive.
        .target(name: "FairPlay", dependencies: ["COpenSSL", "Wire"]),
        // An Apple device in software: builds SPCs, opens CKCs.
        .target(name: "FairPlayDevice", dependencies: ["FairPlay"]),
        // Policy and decisions, no I/O.
        .target(name: "Licensing", dependencies: ["FairPlay", "COpenSSL", "Wire"]),
        // SPEKE v2 key provider: CPIX requests read safely (FoundationXML, no DTD), answers written,
        // content keys encrypted for the packager. Pure and synchronous, no I/O.
        .target(name: "Speke", dependencies: ["FairPlay", "COpenSSL", "Wire"]),
        // librdkafka wrapper: group consumer, idempotent producer, mock cluster.
        .target(
            name: "Kafka",
            dependencies: [
                "CRdKafka", "Loopback", "OwnedThreads", .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        // hiredis wrapper and the Redis-backed license store.
        .target(
            name: "RedisStore",
            dependencies: ["CHiredis", "Licensing", "Wire", "OwnedThreads", .product(name: "Logging", package: "swift-log")]
        ),
        // The worker as a library: jobs, processing, scheduling, the worker loop, crypto pool,
        // credentials and key files, rotation prefetch; instrumented through the swift-log and
        // swift-distributed-tracing APIs only, so an embedder picks the backends.
        .target(
            name: "KSMService",
            dependencies: [
                "FairPlay", "Licensing", "Kafka", "Wire", "OwnedThreads",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "W3CTraceContext", package: "swift-w3c-trace-context"),
            ]
        ),
        // Around a worker process: configuration (flags, environment, file), the admin port, metrics
        // (swift-metrics, exposed with swift-prometheus), JSON logs, OTLP span export (swift-otel); the
        // `ksm speke` service (Speke/), the SPEKE route over the Speke library and the packager key issuer;
        // and what its HTTP services share (HTTP/: TLS from PEM files, HTTP/2 or HTTP/1.1 by ALPN through
        // HummingbirdHTTP2 on swift-nio-ssl).
        .target(
            name: "KSMOperations",
            dependencies: [
                "KSMService", "FairPlay", "Licensing", "Kafka", "RedisStore", "Wire", "OwnedThreads", "Speke",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                // The edge's request deadlines, soonest first.
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "OTel", package: "swift-otel"),
            ]
        ),
        // Child processes for the tools and the tests: a command run to its end (bounded, both pipes
        // drained), a child's exit read from the kernel, a real redis-server or Redis Cluster on free
        // loopback ports. No test code: `ksm bench` and `ksm demo` link it.
        .target(name: "ChildProcesses", dependencies: ["RedisStore", "OwnedThreads", "Loopback"]),
        // Fixtures for test targets only (a shared Redis Cluster, an OTLP collector, generated secrets), with
        // `ChildProcesses` and `Loopback` re-exported. `TestRunWatchdog` is linked for its constructors,
        // never imported: every test bundle that uses the fixtures gets the watchdog.
        .target(name: "KSMTestSupport", dependencies: ["ChildProcesses", "Loopback", "OwnedThreads", "TestRunWatchdog"]),
        // Ends a test process that hangs, with every thread's stack, and lifts its descriptor limit and
        // ignores SIGPIPE (constructors that act only in a test bundle). Test targets only: a
        // test (`ShippingBinaryTests`) holds `ksm` free of it.
        .target(name: "TestRunWatchdog"),
        // Load and benchmarks: the load generator, `ksm bench`'s runs and reports, the demo catalogue
        // and the test credentials. The only library that simulates devices or starts servers.
        .target(
            name: "KSMLoad",
            dependencies: [
                "KSMService", "KSMOperations", "FairPlay", "FairPlayDevice", "Licensing", "Kafka", "RedisStore", "Wire", "ChildProcesses", "OwnedThreads",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "ksm",
            dependencies: [
                "KSMService", "KSMOperations", "KSMLoad", "FairPlay", "Kafka", "RedisStore", "Licensing", "Wire", "CJemalloc",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),

        .testTarget(name: "FairPlayTests", dependencies: ["FairPlay", "FairPlayDevice", "Wire", "KSMTestSupport"]),
        .testTarget(
            name: "KafkaTests", dependencies: ["Kafka", "KSMTestSupport", "Loopback", "OwnedThreads", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(name: "OwnedThreadsTests", dependencies: ["OwnedThreads"]),
        .testTarget(name: "KSMTestSupportTests", dependencies: ["KSMTestSupport", "OwnedThreads", "TestRunWatchdog"]),
        .testTarget(name: "WireTests", dependencies: ["Wire", "KSMTestSupport"]),
        .testTarget(name: "LicensingTests", dependencies: ["Licensing", "FairPlay", "Wire", "KSMTestSupport"]),
        .testTarget(name: "SpekeTests", dependencies: ["Speke", "FairPlay", "Wire", "KSMTestSupport"]),
        .testTarget(name: "RedisStoreTests", dependencies: ["RedisStore", "Licensing", "Wire", "KSMTestSupport", "OwnedThreads"]),
        .testTarget(
            name: "KSMServiceTests",
            dependencies: [
                "KSMService", "KSMOperations", "FairPlay", "FairPlayDevice", "Licensing", "RedisStore", "Kafka", "Wire", "KSMTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "OTel", package: "swift-otel"),
            ]
        ),
        .testTarget(
            name: "KSMOperationsTests",
            dependencies: [
                "KSMOperations", "KSMService", "Licensing", "RedisStore", "Kafka", "Speke", "FairPlay", "Wire", "KSMTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "OTel", package: "swift-otel"),
            ]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "FairPlay", "FairPlayDevice", "KSMService", "KSMOperations", "KSMLoad", "Kafka", "RedisStore", "Licensing", "Speke", "Wire", "KSMTestSupport",
                "OwnedThreads", "ksm",
                .product(name: "Yams", package: "Yams"),
            ]
        ),
    ]
)
