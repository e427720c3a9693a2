#!/usr/bin/env python3
"""Offline checks of deploy/observability/ (promtool and Grafana are not available here).

    python3 scripts/check-observability.py    # exit 1 on any failure

- grafana-dashboard.json parses; it has a title, a uid, panels with unique ids, a gridPos and at
  least one target each; every target's expr uses only metrics the worker exports, each selected
  by the dashboard's `namespace` variable (one fleet at a time, never two added up); consumer lag
  is never aggregated across topics (partition 3 of the requests topic and of a class topic are
  different partitions); panels show dropped messages and dead letters.
- prometheus-alerts.yaml parses (PyYAML); `groups` is a non-empty list of named groups; each rule
  has a unique `alert` name, an `expr`, a `for` duration in Prometheus syntax, labels.severity and
  annotations.summary/description; expressions have balanced brackets, use only exported metrics,
  and cover the storm: lag, p99, error ratio, store down, stalled worker, dropped messages, dead
  letters, and the players' door: the edge's timeouts and refusals; every aggregation keeps
  `namespace`, so each fleet is alerted on alone.

The exported metric names are read from Sources/KSMOperations/Metrics/MetricCatalog.swift (the
names passed to counter(...), gauge(...) and histogram(...)) and from
Sources/KSMOperations/Edge/EdgeMetrics.swift and EdgeAdmissionMetrics.swift (their `...Name`
constants), so a renamed metric fails this check.
promtool itself (check rules, test rules, check metrics on a real scrape) runs in the Swift suite.
"""
import json
import os
import re
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OBS = os.path.join(ROOT, "deploy", "observability")
METRICS_SOURCE = os.path.join(ROOT, "Sources", "KSMOperations", "Metrics", "MetricCatalog.swift")
EDGE_METRICS_SOURCES = [
    os.path.join(ROOT, "Sources", "KSMOperations", "Edge", name) for name in ("EdgeMetrics.swift", "EdgeAdmissionMetrics.swift")
]
REQUIRED_ALERT_TOPICS = {
    "lag": "ksm_consumer_lag",
    "p99": "ksm_job_latency_seconds_bucket",
    "error ratio": "ksm_replies_total",
    "store down": "ksm_store_up",
    "stalled worker": "ksm_processing_stalled",
    "dropped messages": "ksm_messages_dropped_total",
    "dead letters": "ksm_dead_letters_total",
    "edge timeouts": "ksm_edge_timeouts_total",
}
# Topics a metric name alone does not tell apart: the selector an alert's expr must hold.
REQUIRED_ALERT_SELECTORS = {
    "edge refusals": 'ksm_edge_requests_total{outcome=~"overloaded|unavailable"}',
}
NAMESPACE_SELECTOR = 'namespace="$namespace"'
# An alert's aggregation, whose grouping must keep the namespace (one fleet per namespace).
AGGREGATION = re.compile(r"\b(sum|min|max|avg|count|topk|bottomk|quantile)\s*(by\s*\(([^)]*)\))?\s*\(")
SELECTOR = re.compile(r"\b(ksm_[a-z0-9_]+)(\{([^}]*)\})?")
# Aggregations of the per-partition lag: `sum by (...) (ksm_consumer_lag...)` or `sum(ksm_consumer_lag...)`.
LAG_AGGREGATION = re.compile(r"\b(sum|max|min|avg|count|topk|bottomk)\s*(by\s*\(([^)]*)\))?\s*\([^()]*\bksm_consumer_lag\b(?!_)")
DURATION = re.compile(r"^([0-9]+(ms|s|m|h|d|w|y))+$")

failures = []


def fail(where, message):
    failures.append(f"{where}: {message}")


def exported_metrics():
    with open(METRICS_SOURCE, encoding="utf-8") as f:
        source = f.read()
    names = set()
    # A call may be broken across lines (the formatter wraps long ones): whitespace after "(".
    for kind, name in re.findall(r'\b(counter|gauge|histogram)\(\s*"(ksm_[a-z0-9_]+)"', source):
        names.add(name)
        if kind == "histogram":
            names.update({name + "_bucket", name + "_sum", name + "_count"})
    # ksm edge's names are constants of EdgeMetrics and EdgeAdmissionMetrics; its one histogram is
    # the request duration.
    for path in EDGE_METRICS_SOURCES:
        with open(path, encoding="utf-8") as f:
            for name in re.findall(r'static let [A-Za-z]+Name = "(ksm_edge_[a-z0-9_]+)"', f.read()):
                names.add(name)
                if name.endswith("_seconds"):
                    names.update({name + "_bucket", name + "_sum", name + "_count"})
    return names


def metrics_in(expr):
    return set(re.findall(r"\bksm_[a-z0-9_]+\b", expr))


def balanced(expr):
    pairs = {")": "(", "]": "[", "}": "{"}
    stack = []
    in_string = None
    for c in expr:
        if in_string:
            if c == in_string:
                in_string = None
            continue
        if c in "\"'":
            in_string = c
        elif c in "([{":
            stack.append(c)
        elif c in pairs:
            if not stack or stack.pop() != pairs[c]:
                return False
    return not stack and in_string is None


def check_expr(where, expr, known):
    if not isinstance(expr, str) or not expr.strip():
        fail(where, "expr missing or empty")
        return
    if not balanced(expr):
        fail(where, f"unbalanced brackets or quotes in {expr!r}")
    used = metrics_in(expr)
    if not used:
        fail(where, "expr uses no ksm_ metric")
    for name in sorted(used - known):
        fail(where, f"unknown metric {name} (not exported by the worker or the edge)")


def check_dashboard(known):
    path = os.path.join(OBS, "grafana-dashboard.json")
    try:
        with open(path, encoding="utf-8") as f:
            dash = json.load(f)
    except (OSError, ValueError) as e:
        fail(path, f"does not parse: {e}")
        return
    for key in ("title", "uid", "panels", "schemaVersion"):
        if key not in dash:
            fail("dashboard", f"missing {key}")
    ids = set()
    covered = set()
    for panel in dash.get("panels", []):
        where = f"dashboard panel {panel.get('title', '?')!r}"
        if panel.get("id") in ids:
            fail(where, f"duplicate id {panel.get('id')}")
        ids.add(panel.get("id"))
        grid = panel.get("gridPos", {})
        if not all(isinstance(grid.get(k), int) for k in ("x", "y", "w", "h")) or grid.get("x", 0) + grid.get("w", 0) > 24:
            fail(where, "gridPos needs integer x, y, w, h within 24 columns")
        targets = panel.get("targets") or []
        if not targets:
            fail(where, "no targets")
        for target in targets:
            expr = target.get("expr") or ""
            check_expr(where, expr, known)
            covered |= metrics_in(expr)
            for m in SELECTOR.finditer(expr):
                if NAMESPACE_SELECTOR not in (m.group(3) or ""):
                    fail(where, f"{m.group(1)} is not selected by {NAMESPACE_SELECTOR}: two fleets would add up")
            for m in LAG_AGGREGATION.finditer(expr):
                grouping = {g.strip() for g in (m.group(3) or "").split(",") if g.strip()}
                if "topic" not in grouping:
                    fail(where, f"ksm_consumer_lag aggregated {m.group(0)!r} without `topic`: partitions of different "
                                "topics would merge")
    variables = {v.get("name"): v for v in (dash.get("templating") or {}).get("list", [])}
    namespace = variables.get("namespace")
    if not namespace:
        fail("dashboard", "no `namespace` template variable")
    elif "namespace" not in json.dumps(namespace.get("query", "")) or namespace.get("multi") or namespace.get("includeAll"):
        fail("dashboard", "the namespace variable must list label_values(..., namespace) and select one namespace")
    for name in ("ksm_consumer_lag", "ksm_replies_total", "ksm_job_latency_seconds_bucket", "ksm_jobs_queued",
                 "ksm_cache_reads_total", "ksm_store_errors_total", "ksm_kafka_errors_total", "ksm_lease_slots_in_use",
                 "ksm_messages_dropped_total", "ksm_dead_letters_total"):
        if name not in covered:
            fail("dashboard", f"no panel shows {name}")


def check_alerts(known):
    path = os.path.join(OBS, "prometheus-alerts.yaml")
    try:
        with open(path, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        fail(path, f"does not parse: {e}")
        return
    groups = doc.get("groups") if isinstance(doc, dict) else None
    if not isinstance(groups, list) or not groups:
        fail("alerts", "top level needs a non-empty `groups` list")
        return
    names = set()
    used = set()
    for group in groups:
        if not isinstance(group, dict) or not group.get("name") or not isinstance(group.get("rules"), list) or not group["rules"]:
            fail("alerts", "each group needs a name and a non-empty rules list")
            continue
        for rule in group["rules"]:
            where = f"alert {rule.get('alert', '?')}"
            extra = set(rule) - {"alert", "expr", "for", "keep_firing_for", "labels", "annotations"}
            if extra:
                fail(where, f"unknown keys {sorted(extra)}")
            if not rule.get("alert") or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", rule["alert"]):
                fail(where, "alert needs a valid name")
            if rule.get("alert") in names:
                fail(where, "duplicate alert name")
            names.add(rule.get("alert"))
            check_expr(where, rule.get("expr"), known)
            used |= metrics_in(rule.get("expr") or "")
            for m in AGGREGATION.finditer(rule.get("expr") or ""):
                if "namespace" not in {g.strip() for g in (m.group(3) or "").split(",")}:
                    fail(where, f"{m.group(0)!r} aggregates across namespaces: group by namespace (one fleet each)")
            if "for" in rule and not DURATION.match(str(rule["for"])):
                fail(where, f"`for` is not a Prometheus duration: {rule['for']!r}")
            if not (rule.get("labels") or {}).get("severity"):
                fail(where, "labels.severity missing")
            annotations = rule.get("annotations") or {}
            for key in ("summary", "description"):
                if not annotations.get(key):
                    fail(where, f"annotations.{key} missing")
    for topic, metric in REQUIRED_ALERT_TOPICS.items():
        if metric not in used:
            fail("alerts", f"no alert covers {topic} ({metric})")
    for topic, selector in REQUIRED_ALERT_SELECTORS.items():
        if not any(selector in " ".join((rule.get("expr") or "").split()) for group in groups for rule in group.get("rules") or []):
            fail("alerts", f"no alert covers {topic} ({selector})")


def main():
    known = exported_metrics()
    if len(known) < 10:
        fail(METRICS_SOURCE, f"found only {len(known)} metric names; the extraction pattern is stale")
    check_dashboard(known)
    check_alerts(known)
    if failures:
        for f in failures:
            print(f"FAIL {f}", file=sys.stderr)
        return 1
    print(f"observability: dashboard and alert rules OK ({len(known)} exported series names)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
