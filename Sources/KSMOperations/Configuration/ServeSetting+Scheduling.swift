import KSMService
import Licensing

/// The scheduler's and the rotation prefetcher's own defaults, so a `ksm serve` default and an embedder's cannot drift apart.
private let schedulingDefaults = SchedulingPolicy()
private let rotationDefaults = RotationPrefetchConfiguration()
private let windowDefaults = PrefetchWindow()

extension ServeSetting {
    package static let scheduling = ServeSetting(
        "scheduling", flag: .setsFalse("no-scheduling"), env: "KSM_SCHEDULING", .boolean(default: true),
        help: "Serve jobs first in, first out: no priority classes, tenant weights or shedding (docs/scheduling.md).")
    package static let tenantWeights = ServeSetting(
        "tenant-weights", flag: .option("tenant-weight"), env: "KSM_TENANT_WEIGHTS", .map(.positiveNumbers), default: "1 for every tenant",
        help: "TENANT=WEIGHT: a tenant's share of the worker inside a priority class; repeatable.")
    package static let prefetchMaxWait = ServeSetting(
        "prefetch-max-wait", env: "KSM_PREFETCH_MAX_WAIT", .duration(.seconds(0, 3_600), default: schedulingDefaults.prefetchMaximumWait),
        help: "Seconds a prefetch job may wait before it is shed with a retry-after hint.")
    package static let newSessionMaxWait = ServeSetting(
        "new-session-max-wait", env: "KSM_NEW_SESSION_MAX_WAIT", .duration(.seconds(0, 3_600), default: schedulingDefaults.newSessionMaximumWait),
        help: "Seconds a new-session job may wait before it is shed with a retry-after hint.")
    package static let newSessionShare = ServeSetting(
        "new-session-share", env: "KSM_NEW_SESSION_SHARE", .number(.share(0, included: false), default: schedulingDefaults.newSessionShare),
        help: "Least share of every batch that goes to queued new sessions while continuity has a backlog (their floor), more than 0 to 0.5.")
    package static let prefetchShare = ServeSetting(
        "prefetch-share", env: "KSM_PREFETCH_SHARE", .number(.share(0, included: true), default: schedulingDefaults.prefetchShare),
        help: "Least share of every batch that goes to queued prefetch jobs, 0 to 0.5; with new-session-share at most 0.5.")
    package static let rotationLead = ServeSetting(
        "rotation-lead", env: "KSM_ROTATION_LEAD", .duration(.seconds(0, included: true, maximumSeconds), default: rotationDefaults.leadTime),
        help: "Seconds before a key-rotation boundary the next key is prefetched (needs the cache); 0 turns prefetch off.")
    package static let rotationInterval = ServeSetting(
        "rotation-interval", env: "KSM_ROTATION_INTERVAL", .duration(.seconds(0, maximumSeconds), default: rotationDefaults.interval),
        help: "Seconds between rotation prefetch passes.")
    package static let prefetchWindow = ServeSetting(
        "prefetch-window", env: "KSM_PREFETCH_WINDOW",
        .duration(.seconds(0, included: true, 3_600), default: .milliseconds(windowDefaults.windowMilliseconds)),
        help:
            "Seconds of the window before a rotation boundary in which each viewer is told (reply field next-key) to fetch the next key, spread per viewer; 0 advertises none."
    )
    package static let prefetchMargin = ServeSetting(
        "prefetch-margin", env: "KSM_PREFETCH_MARGIN", .duration(.seconds(0, included: true, 600), default: .milliseconds(windowDefaults.marginMilliseconds)),
        help: "Seconds between the prefetch window's end and the boundary, so the last answer arrives in time.")
}
