#!/usr/bin/env python3
"""Structural checks of deploy/ that schema validation cannot do, offline, with PyYAML.

    python3 scripts/check-deploy.py list-builtin   # Kubernetes manifests of built-in kinds, one a line
    python3 scripts/check-deploy.py check          # every check below; exit 1 on any failure

Checked:
- Kubernetes: each kustomization's resources exist; per variant (deploy/kubernetes and
  deploy/kubernetes/statefulset) the workload's probes, security context, grace period, preStop,
  resources, anti-affinity, the ConfigMap / Secret names it uses, the Service and PDB selectors;
  the KEDA ScaledObject (a CRD that kubernetes-validate does not know): apiVersion, scaleTargetRef
  to the variant's workload, a kafka trigger on the group's lag, no cron trigger (an event window
  belongs in an overlay such as deploy/examples/event-window, whose trigger is checked), and
  advanced.horizontalPodAutoscalerConfig.behavior, which is also validated as a real
  autoscaling/v2 HorizontalPodAutoscaler with kubernetes-validate's schemas; the StatefulSet's static
  membership; the Secret template holds placeholders only; JSON logs; no secret in any container's
  args or plain env (secret librdkafka properties come from files, KSM_KAFKA_PROPERTY_FILES); the
  topics Job creates every topic the workers read and write (`ksm admin create-topics` with the
  workers' ConfigMap, the partition count the ScaledObject assumes); the NetworkPolicy admits only
  the admin port and lets out only DNS, Kafka, Redis and OTLP. The key provider (deploy/kubernetes/speke):
  `ksm speke` with two or more replicas, the workers' ConfigMap and Secrets, probes on its one port
  (the port KSM_SPEKE_LISTEN names), the workers' security context, a grace period that covers the
  preStop pause and the 20 s drain, the KEK and (commented-out) TLS files under read-only mounts of
  Secrets the template names, a Service from port 80, a PDB and a NetworkPolicy that admit only that
  port and let out only DNS and Redis. The edge (deploy/kubernetes/edge): `ksm edge` with no fixed
  replica count (KEDA's, at least 2, on a cpu trigger and sum(rate(ksm_edge_requests_total)); the
  no-KEDA hpa.yaml kept out of the kustomization), KSM_EDGE_INSTANCE_ID from the pod's name, reply
  topics inside the workers' reply-topic allowlist, probes on its one port, a grace period over the
  preStop pause and the drain, the workers' security context, KEK and TLS files under read-only
  Secret mounts, a Service from port 80, a PDB and a NetworkPolicy letting out DNS, Kafka and Redis.
- docker-compose.yml: kafka (KRaft), redis 7, kafka-init (`ksm admin create-topics`), ksm-setup,
  three `ksm serve` workers waiting for them,
  loadgen (its flags are checked by running the real binary, ComposeStackTests); every ksm service
  has every KSM_* variable; depends_on targets exist and a service_healthy target has a healthcheck;
  mounted files exist; host ports only for admin ports and the key provider's port, on 127.0.0.1;
  topics and partitions; the `speke` service (`ksm speke`, healthy by /readyz, after ksm-setup,
  publishing the port it listens on); the `edge` service (`ksm edge`, the workers' brokers, topics
  and Redis, healthy by /readyz, after kafka-init and ksm-setup, publishing the port it listens on,
  its reply topic inside the workers' allowlist, the certificate it serves stored by ksm-setup).
- Dockerfile and .dockerignore: multi-stage, bookworm-slim runtime, non-root, HEALTHCHECK,
  EXPOSE 9090, no Fixtures shipped.
"""
import json
import os
import re
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEPLOY = os.path.join(ROOT, "deploy")
K8S = os.path.join(DEPLOY, "kubernetes")

KSM_ENV = [
    "KSM_KAFKA_BROKERS", "KSM_KAFKA_GROUP", "KSM_REQUESTS_TOPIC", "KSM_REPLIES_TOPIC", "KSM_DLQ_TOPIC",
    "KSM_REDIS_URL", "KSM_CREDENTIALS", "KSM_KEK_FILES", "KSM_ADMIN_PORT", "KSM_LOG_FORMAT",
]
# librdkafka property names that hold secrets (as Redaction.isSecretKafkaProperty in ksm): such a
# value never belongs in args or plain env, where /proc/PID/cmdline and environ show it.
SECRET_PROPERTY = re.compile(r"password|secret|jaas|oauthbearer\.config|key\.pem|ssl\.key|token", re.I)
# The Kubernetes API groups the topics Job and workers need no rule for; egress ports a worker uses.
WORKER_EGRESS_PORTS = {53, 9092, 6379}
TOPICS = {"fps.license.requests", "fps.license.replies", "fps.license.dlq"}
REQUEST_PARTITIONS = 12
# Versions of Kubernetes' own schemas used for the HPA built from the ScaledObject's behavior.
HPA_VERSIONS = ["1.27", "1.37"]
CRD_GROUPS = ("keda.sh/", "monitoring.coreos.com/", "kustomize.config.k8s.io/", "kafka.strimzi.io/")

failures = []
passes = []


def fail(where, message):
    failures.append(f"{where}: {message}")


def ok(message):
    passes.append(message)


def rel(path):
    return os.path.relpath(path, ROOT)


def load_all(path):
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def yaml_files(top):
    for dirpath, _, names in os.walk(top):
        for name in sorted(names):
            if name.endswith((".yaml", ".yml")):
                yield os.path.join(dirpath, name)


def get(obj, *path, default=None):
    for key in path:
        if isinstance(obj, dict) and key in obj:
            obj = obj[key]
        elif isinstance(obj, list) and isinstance(key, int) and key < len(obj):
            obj = obj[key]
        else:
            return default
    return obj


# ---------------------------------------------------------------------------------------------
# Kubernetes


def builtin_manifests():
    """Files under deploy/kubernetes whose every document is of a built-in kind."""
    files = []
    for path in yaml_files(K8S):
        docs = load_all(path)
        if docs and all(isinstance(d, dict) and not str(d.get("apiVersion", "")).startswith(CRD_GROUPS)
                        for d in docs):
            files.append(path)
    return files


def kustomize(directory, seen=None):
    """The documents a kustomization directory builds (resources only, recursively)."""
    seen = seen or set()
    kfile = os.path.join(directory, "kustomization.yaml")
    where = rel(kfile)
    if not os.path.isfile(kfile):
        fail(rel(directory), "no kustomization.yaml")
        return []
    if kfile in seen:
        fail(where, "kustomization cycle")
        return []
    seen.add(kfile)
    kust = load_all(kfile)[0]
    if kust.get("kind") != "Kustomization":
        fail(where, "kind is not Kustomization")
    if "namespace" in kust:
        fail(where, "manifests are meant to be namespace-agnostic: no `namespace:`")
    docs = []
    for res in kust.get("resources", []):
        target = os.path.normpath(os.path.join(directory, res))
        if os.path.isdir(target):
            docs += kustomize(target, seen)
        elif os.path.isfile(target):
            for d in load_all(target):
                docs.append((rel(target), d))
        else:
            fail(where, f"resource {res} does not exist")
    return docs


def labels_match(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def check_workload(where, w, docs):
    spec = w.get("spec", {})
    pod = get(spec, "template", "spec", default={})
    pod_labels = get(spec, "template", "metadata", "labels", default={})
    if not labels_match(get(spec, "selector", "matchLabels"), pod_labels):
        fail(where, "selector.matchLabels does not match the pod template's labels")
    if "replicas" in spec:
        fail(where, "`replicas` is set, but KEDA owns the replica count (an apply would reset it)")
    grace = pod.get("terminationGracePeriodSeconds")
    if not isinstance(grace, int) or grace < 30:
        fail(where, f"terminationGracePeriodSeconds {grace!r}: shutdown takes up to 25 s, want >= 30")
    psc = pod.get("securityContext", {})
    if psc.get("runAsNonRoot") is not True or not psc.get("runAsUser"):
        fail(where, "pod securityContext must set runAsNonRoot: true and a non-zero runAsUser")
    anti = get(pod, "affinity", "podAntiAffinity")
    if not anti:
        fail(where, "no podAntiAffinity")
    containers = pod.get("containers", [])
    ksm = [c for c in containers if c.get("name") == "ksm"]
    if len(ksm) != 1:
        fail(where, "expected one container named ksm")
        return
    c = ksm[0]
    if not c.get("args") or c["args"][0] != "serve":
        fail(where, "container args must start with `serve`")
    ports = {p.get("name"): p.get("containerPort") for p in c.get("ports", [])}
    if ports.get("admin") != 9090:
        fail(where, "container port `admin` must be 9090")
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz"), ("startupProbe", "/healthz")):
        got = get(c, probe, "httpGet", "path")
        if got != path:
            fail(where, f"{probe} must GET {path}, has {got!r}")
        elif get(c, probe, "httpGet", "port") not in ("admin", 9090):
            fail(where, f"{probe} must use the admin port")
    if not get(c, "lifecycle", "preStop"):
        fail(where, "no preStop hook")
    else:
        cmd = get(c, "lifecycle", "preStop", "exec", "command", default=[])
        if cmd[:1] == ["/bin/sleep"] and isinstance(grace, int) and int(cmd[1]) + 25 > grace:
            fail(where, f"preStop sleep {cmd[1]} s + 25 s shutdown exceeds the {grace} s grace period")
    csc = c.get("securityContext", {})
    if csc.get("readOnlyRootFilesystem") is not True:
        fail(where, "readOnlyRootFilesystem must be true")
    if csc.get("allowPrivilegeEscalation") is not False:
        fail(where, "allowPrivilegeEscalation must be false")
    if "ALL" not in get(csc, "capabilities", "drop", default=[]):
        fail(where, "capabilities must drop ALL")
    for kind in ("requests", "limits"):
        res = get(c, "resources", kind, default={})
        if "cpu" not in res and kind == "requests" or "memory" not in res:
            fail(where, f"resources.{kind} must set cpu and memory")
    # Names used must exist: ConfigMaps in the variant, Secrets in the template.
    configmaps = {d["metadata"]["name"] for _, d in docs if d.get("kind") == "ConfigMap"}
    secrets = set()
    template = os.path.join(K8S, "secret.template.yaml")
    for d in load_all(template):
        secrets.add(d["metadata"]["name"])
    env_names = set()
    for ef in c.get("envFrom", []):
        name = get(ef, "configMapRef", "name")
        if name and name not in configmaps:
            fail(where, f"envFrom ConfigMap {name} is not in the kustomization")
        for _, d in docs:
            if d.get("kind") == "ConfigMap" and d["metadata"]["name"] == name:
                env_names |= set(d.get("data", {}))
    for e in c.get("env", []):
        env_names.add(e["name"])
        sname = get(e, "valueFrom", "secretKeyRef", "name")
        if sname and sname not in secrets:
            fail(where, f"env {e['name']} reads Secret {sname}, not in secret.template.yaml")
    missing = [v for v in KSM_ENV if v not in env_names]
    if missing:
        fail(where, f"the worker gets no {', '.join(missing)}")
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    for v in volumes.values():
        sname = get(v, "secret", "secretName")
        if sname and sname not in secrets:
            fail(where, f"volume {v['name']} mounts Secret {sname}, not in secret.template.yaml")
    mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
    for m in mounts.values():
        if m["name"] not in volumes:
            fail(where, f"volumeMount {m['name']} has no volume")
    if "/tmp" not in mounts:
        fail(where, "a read-only root filesystem wants a writable /tmp (emptyDir)")
    # Files named by the ConfigMap must sit under a mounted Secret.
    for _, d in docs:
        if d.get("kind") != "ConfigMap":
            continue
        data = d.get("data", {})
        paths = [data.get("KSM_CREDENTIALS", "")]
        paths += [p.split("=", 1)[1] for p in data.get("KSM_KEK_FILES", "").split(",") if "=" in p]
        for p in paths:
            if p and not any(p.startswith(mp.rstrip("/") + "/") and mounts[mp].get("readOnly") for mp in mounts):
                fail(where, f"{p} is not under a read-only mount")
        if data.get("KSM_KAFKA_GROUP") != "fps-ksm" or data.get("KSM_REQUESTS_TOPIC") != "fps.license.requests":
            fail(rel(K8S), "ConfigMap group / requests topic differ from fps-ksm / fps.license.requests")
        if "KSM_REDIS_URL" in data:
            fail(where, "KSM_REDIS_URL carries a password: take it from a Secret, not the ConfigMap")
    for _, d in docs:
        if d.get("kind") == "Service" and not labels_match(get(d, "spec", "selector"), pod_labels):
            fail(where, f"Service {d['metadata']['name']} does not select the workers")
        if d.get("kind") == "PodDisruptionBudget" and not labels_match(get(d, "spec", "selector", "matchLabels"), pod_labels):
            fail(where, f"PodDisruptionBudget {d['metadata']['name']} does not select the workers")
    if not any(d.get("kind") == "PodDisruptionBudget" for _, d in docs):
        fail(where, "no PodDisruptionBudget in the variant")
    metrics = [d for _, d in docs if d.get("kind") == "Service" and
               any(p.get("port") == 9090 for p in get(d, "spec", "ports", default=[]))]
    if not metrics:
        fail(where, "no Service exposing the metrics port 9090")
    if w["kind"] == "StatefulSet":
        inst = [e for e in c.get("env", []) if e["name"] == "KSM_INSTANCE_ID"]
        if not inst or get(inst[0], "valueFrom", "fieldRef", "fieldPath") != "metadata.name":
            fail(where, "static membership: KSM_INSTANCE_ID must come from metadata.name")
        headless = [d for _, d in docs if d.get("kind") == "Service" and get(d, "spec", "clusterIP") == "None"
                    and d["metadata"]["name"] == spec.get("serviceName")]
        if not headless:
            fail(where, f"serviceName {spec.get('serviceName')!r} is not a headless Service of the variant")
        args = " ".join(c.get("args", []))
        m = re.search(r"session\.timeout\.ms=(\d+)", args)
        if not m or int(m.group(1)) < grace * 1000:
            fail(where, "static membership wants session.timeout.ms longer than a restart (>= grace period)")


def validate_hpa_behavior(where, behavior, target):
    """The behavior KEDA copies into its HPA, checked against Kubernetes' own HPA schema."""
    import kubernetes_validate
    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "keda-hpa-check"},
        "spec": {
            "scaleTargetRef": target, "minReplicas": 1, "maxReplicas": 2,
            "metrics": [{"type": "External", "external": {
                "metric": {"name": "s0-kafka-fps-license-requests"},
                "target": {"type": "AverageValue", "averageValue": "200"}}}],
            "behavior": behavior,
        },
    }
    for version in HPA_VERSIONS:
        try:
            kubernetes_validate.validate(hpa, version, strict=True)
        except Exception as error:  # ValidationError, InvalidSchemaError, ...
            fail(where, f"advanced.horizontalPodAutoscalerConfig.behavior is not a valid HPA behavior "
                        f"(Kubernetes {version}): {getattr(error, 'message', error)}")


CRON_FIELD = re.compile(r"^[\d*/,\-]+$")


def check_scaledobject(where, so, workload, configmap):
    if so.get("apiVersion") != "keda.sh/v1alpha1":
        fail(where, f"apiVersion {so.get('apiVersion')!r}, want keda.sh/v1alpha1")
    spec = so.get("spec", {})
    ref = spec.get("scaleTargetRef", {})
    if not workload or ref.get("name") != workload["metadata"]["name"] or ref.get("kind", "Deployment") != workload["kind"]:
        fail(where, f"scaleTargetRef {ref} is not the variant's workload")
    lo, hi = spec.get("minReplicaCount", 0), spec.get("maxReplicaCount", 100)
    if not (isinstance(lo, int) and isinstance(hi, int) and 1 <= lo <= hi):
        fail(where, f"minReplicaCount {lo!r} / maxReplicaCount {hi!r}")
    if isinstance(hi, int) and hi > REQUEST_PARTITIONS:
        fail(where, f"maxReplicaCount {hi} exceeds the {REQUEST_PARTITIONS} request partitions: idle workers")
    triggers = spec.get("triggers", [])
    types = [t.get("type") for t in triggers]
    kafka = [t for t in triggers if t.get("type") == "kafka"]
    cron = [t for t in triggers if t.get("type") == "cron"]
    if not kafka:
        fail(where, f"no kafka trigger (types: {types})")
    for t in kafka:
        md = t.get("metadata", {})
        for key in ("bootstrapServers", "consumerGroup", "topic", "lagThreshold"):
            if not md.get(key):
                fail(where, f"kafka trigger lacks metadata.{key}")
        if md.get("consumerGroup") != configmap.get("KSM_KAFKA_GROUP"):
            fail(where, f"kafka trigger group {md.get('consumerGroup')!r} is not KSM_KAFKA_GROUP")
        requests = configmap.get("KSM_REQUESTS_TOPIC")
        read = {requests}
        if configmap.get("KSM_CLASS_TOPICS") == "true":
            read |= {f"{requests}.{c}" for c in ("continuity", "new", "prefetch")}
        if md.get("topic") not in read:
            fail(where, f"kafka trigger topic {md.get('topic')!r} is not a topic the workers read ({sorted(read)})")
        for key, val in md.items():
            if not isinstance(val, str):
                fail(where, f"kafka trigger metadata.{key} must be a string (KEDA reads strings), is {val!r}")
        if not str(md.get("lagThreshold", "")).isdigit():
            fail(where, "kafka trigger lagThreshold must be a whole number")
    if configmap.get("KSM_CLASS_TOPICS") == "true":
        continuity = f"{configmap.get('KSM_REQUESTS_TOPIC')}.continuity"
        if not any(t.get("metadata", {}).get("topic") == continuity for t in kafka):
            fail(where, f"class topics are on but no kafka trigger watches the continuity lag ({continuity})")
    for t in (t for t in triggers if t.get("type") == "prometheus"):
        md = t.get("metadata", {})
        for key in ("serverAddress", "query", "threshold"):
            if not isinstance(md.get(key), str) or not md.get(key):
                fail(where, f"prometheus trigger lacks metadata.{key} (a string)")
        if "ksm_expected_rotation_load" in str(md.get("query", "")) and "sum(" in str(md.get("query", "")):
            fail(where, "ksm_expected_rotation_load is fleet-wide on every worker: aggregate with max, not sum")
    if cron:
        fail(where, f"cron trigger(s) {[t.get('name') for t in cron]}: a schedule here scales every cluster the "
                    "manifests are applied to; put event windows in an overlay (deploy/examples/event-window)")
    check_cron_triggers(where, cron, hi)
    behavior = get(spec, "advanced", "horizontalPodAutoscalerConfig", "behavior")
    if not isinstance(behavior, dict):
        fail(where, "no advanced.horizontalPodAutoscalerConfig.behavior")
        return
    up, down = behavior.get("scaleUp", {}), behavior.get("scaleDown", {})
    if up.get("stabilizationWindowSeconds") != 0:
        fail(where, "scaleUp.stabilizationWindowSeconds must be 0 (react to bursts at once)")
    if not any(p.get("type") == "Percent" and p.get("value", 0) >= 100 and p.get("periodSeconds", 99) <= 15
               for p in up.get("policies", [])):
        fail(where, "scaleUp wants a policy of at least 100% per 15 s")
    if not isinstance(down.get("stabilizationWindowSeconds"), int) or down["stabilizationWindowSeconds"] < 300:
        fail(where, "scaleDown.stabilizationWindowSeconds must be >= 300 (slow scale-down)")
    validate_hpa_behavior(where, behavior, {"apiVersion": "apps/v1", "kind": ref.get("kind", "Deployment"),
                                            "name": ref.get("name", "x")})


def check_cron_triggers(where, cron, hi):
    for t in cron:
        md = t.get("metadata", {})
        for key in ("timezone", "start", "end", "desiredReplicas"):
            if not isinstance(md.get(key), str) or not md.get(key):
                fail(where, f"cron trigger lacks metadata.{key} (a string)")
        for key in ("start", "end"):
            fields = str(md.get(key, "")).split()
            if len(fields) != 5 or not all(CRON_FIELD.match(f) for f in fields):
                fail(where, f"cron trigger {key} {md.get(key)!r} is not a 5-field cron expression")
        want = str(md.get("desiredReplicas", ""))
        if not want.isdigit() or not (isinstance(hi, int) and int(want) <= hi):
            fail(where, f"cron desiredReplicas {want!r} must be a number <= maxReplicaCount")
        if str(md.get("start", "")).split()[-1:] not in (["*"], []):
            fail(where, f"cron trigger start {md.get('start')!r} names a weekday: it would recur every week; "
                        "name the event's day and month")


def check_secret_template():
    path = os.path.join(K8S, "secret.template.yaml")
    where = rel(path)
    import base64
    for d in load_all(path):
        name = d["metadata"]["name"]
        values = dict(d.get("stringData", {}))
        for k, v in d.get("data", {}).items():
            try:
                values[k] = base64.b64decode(v, validate=True).decode("utf-8")
            except Exception:
                fail(where, f"{name}.{k}: data is not base64 of a text placeholder")
        for k, v in values.items():
            if "PRIVATE KEY-----" in v or "CERTIFICATE-----" in v:
                fail(where, f"{name}.{k} holds a real key or certificate: placeholders only")
            elif k.endswith(".json"):
                json.loads(v)
            elif "REPLACE" not in v:
                fail(where, f"{name}.{k} is not a REPLACE_... placeholder")
    top = load_all(os.path.join(K8S, "kustomization.yaml"))[0]
    if "secret.template.yaml" in top.get("resources", []):
        fail(where, "the template must not be in kustomization.yaml (it would overwrite real Secrets)")


def check_no_secret_in_args(where, pod):
    """No container passes a secret on its command line or as a plain env value: /proc/PID/cmdline
    and /proc/PID/environ show both. Secret librdkafka properties come from files
    (--kafka-property-file / KSM_KAFKA_PROPERTY_FILES); a Secret as env is only for KSM_REDIS_URL,
    which ksm reads once."""
    for c in pod.get("initContainers", []) + pod.get("containers", []):
        name = c.get("name")
        args = [str(a) for a in c.get("args", []) + c.get("command", [])]
        secret_env = {get(e, "name") for e in c.get("env", []) if get(e, "valueFrom", "secretKeyRef")}
        for i, arg in enumerate(args):
            value = arg.split("=", 1)[1] if arg.startswith("--kafka-property=") else (
                args[i + 1] if arg == "--kafka-property" and i + 1 < len(args) else None)
            if value is not None and SECRET_PROPERTY.search(value.split("=", 1)[0]):
                fail(where, f"container {name} passes the secret librdkafka property {value.split('=', 1)[0]} in its "
                            "args; give it as a file (--kafka-property-file NAME=PATH from a Secret volume)")
            for var in secret_env:
                if f"$({var})" in arg:
                    fail(where, f"container {name} expands the Secret-backed variable {var} into its args")
        for e in c.get("env", []):
            if e.get("name") == "KSM_KAFKA_PROPERTIES" and (get(e, "valueFrom", "secretKeyRef") or
                                                             SECRET_PROPERTY.search(str(e.get("value", "")))):
                fail(where, f"container {name}: KSM_KAFKA_PROPERTIES carries a secret; use KSM_KAFKA_PROPERTY_FILES")


def check_configmap_production(where, configmap):
    if configmap.get("KSM_LOG_FORMAT") != "json":
        fail(where, f"KSM_LOG_FORMAT is {configmap.get('KSM_LOG_FORMAT')!r}: a cluster's log pipeline wants json")
    for pair in str(configmap.get("KSM_KAFKA_PROPERTIES", "")).split(";"):
        if "=" in pair and SECRET_PROPERTY.search(pair.split("=", 1)[0]):
            fail(where, f"KSM_KAFKA_PROPERTIES holds the secret {pair.split('=', 1)[0]}: use KSM_KAFKA_PROPERTY_FILES")


def check_topics_job(scaled_max):
    directory = os.path.join(K8S, "topics")
    docs = kustomize(directory)
    where = rel(directory)
    jobs = [(f, d) for f, d in docs if d.get("kind") == "Job"]
    cms = {d["metadata"]["name"]: d.get("data", {}) for _, d in docs if d.get("kind") == "ConfigMap"}
    if len(jobs) != 1:
        fail(where, f"expected one Job that creates the topics, found {len(jobs)}")
        return
    f, job = jobs[0]
    pod = get(job, "spec", "template", "spec", default={})
    containers = pod.get("containers", [])
    creating = [c for c in containers if [str(a) for a in c.get("args", [])][:2] == ["admin", "create-topics"]]
    if len(creating) != 1:
        fail(f, "no container runs `ksm admin create-topics`")
        return
    c = creating[0]
    args = [str(a) for a in c.get("args", [])]
    names = [get(e, "configMapRef", "name") for e in c.get("envFrom", [])]
    if "ksm-config" not in names or "ksm-config" not in cms:
        fail(f, "the Job must read the workers' ConfigMap ksm-config (envFrom), so it creates the topics they read")

    def option(flag, default):
        return int(args[args.index(flag) + 1]) if flag in args and args.index(flag) + 1 < len(args) else default
    partitions = option("--partitions", 12)
    if partitions != REQUEST_PARTITIONS or (isinstance(scaled_max, int) and partitions < scaled_max):
        fail(f, f"--partitions {partitions}: the ScaledObject assumes {REQUEST_PARTITIONS} request partitions "
                f"(maxReplicaCount {scaled_max})")
    if option("--replication-factor", 3) < 3:
        fail(f, "a production topic wants --replication-factor 3 or more")
    if pod.get("restartPolicy") not in ("OnFailure", "Never") or not isinstance(get(job, "spec", "backoffLimit"), int):
        fail(f, "the Job must retry (restartPolicy OnFailure, a backoffLimit) while Kafka is not reachable yet")
    if get(pod, "securityContext", "runAsNonRoot") is not True or get(c, "securityContext", "readOnlyRootFilesystem") is not True:
        fail(f, "the Job runs non-root on a read-only root filesystem, as the workers")
    check_no_secret_in_args(f, pod)
    ok(f"topics Job: ksm admin create-topics with ksm-config, {partitions} partitions")


def check_network_policy():
    docs = kustomize(os.path.join(K8S, "common"))
    policies = [(f, d) for f, d in docs if d.get("kind") == "NetworkPolicy"]
    worker_labels = {"app.kubernetes.io/name": "fairplay-ksm", "app.kubernetes.io/component": "worker"}
    workers = [(f, p) for f, p in policies if labels_match(get(p, "spec", "podSelector", "matchLabels"), worker_labels)
               and not get(p, "spec", "podSelector", "matchExpressions")]
    if len(workers) != 1:
        fail("deploy/kubernetes/common", f"expected one NetworkPolicy for the workers, found {len(workers)}")
        return
    f, policy = workers[0]
    spec = policy.get("spec", {})
    if set(spec.get("policyTypes", [])) != {"Ingress", "Egress"}:
        fail(f, "the worker policy must restrict both Ingress and Egress")
    for rule in spec.get("ingress", []):
        ports = [p.get("port") for p in rule.get("ports", [])]
        if not ports or any(p not in (9090, "admin") for p in ports):
            fail(f, f"ingress to ports {ports or 'all'}: only the admin port 9090")
        if not rule.get("from"):
            fail(f, "an ingress rule from anywhere: name where Prometheus runs")
    egress_ports = {p.get("port") for rule in spec.get("egress", []) for p in rule.get("ports", [])}
    if any(not rule.get("ports") for rule in spec.get("egress", [])):
        fail(f, "an egress rule without ports lets the worker reach anything")
    missing = WORKER_EGRESS_PORTS - egress_ports
    if missing:
        fail(f, f"egress lacks ports {sorted(missing)} (DNS 53, Kafka 9092, Redis 6379)")
    ok(f"NetworkPolicy: workers reach ports {sorted(egress_ports)}, admit 9090 from Prometheus only")


def check_event_window():
    directory = os.path.join(DEPLOY, "examples", "event-window")
    kfile = os.path.join(directory, "kustomization.yaml")
    where = rel(kfile)
    if not os.path.isfile(kfile):
        fail(where, "missing: the example of pre-scaling for an event window")
        return
    kust = load_all(kfile)[0]
    crons = []
    for patch in kust.get("patches", []):
        for op in yaml.safe_load(patch.get("patch", "")) or []:
            value = op.get("value", {}) if isinstance(op, dict) else {}
            if op.get("path") == "/spec/triggers/-" and value.get("type") == "cron":
                crons.append(value)
    if not crons:
        fail(where, "no cron trigger patched onto the ScaledObject")
    check_cron_triggers(where, crons, REQUEST_PARTITIONS)


SPEKE_DRAIN_SECONDS = 20


def check_speke():
    """deploy/kubernetes/speke: `ksm speke` with the workers' ConfigMap and Secrets."""
    directory = os.path.join(K8S, "speke")
    where = rel(directory)
    docs = kustomize(directory)
    deployments = [(f, d) for f, d in docs if d.get("kind") == "Deployment"]
    if len(deployments) != 1:
        fail(where, f"expected one Deployment of `ksm speke`, found {len(deployments)}")
        return
    f, w = deployments[0]
    spec = w.get("spec", {})
    pod = get(spec, "template", "spec", default={})
    pod_labels = get(spec, "template", "metadata", "labels", default={})
    if not labels_match(get(spec, "selector", "matchLabels"), pod_labels):
        fail(f, "selector.matchLabels does not match the pod template's labels")
    if pod_labels.get("app.kubernetes.io/component") != "speke":
        fail(f, "pods must be labelled app.kubernetes.io/component: speke (the workers' policies select `worker`)")
    if not isinstance(spec.get("replicas"), int) or spec["replicas"] < 2:
        fail(f, f"replicas {spec.get('replicas')!r}: want at least 2, so a packager always finds one")
    psc = pod.get("securityContext", {})
    if psc.get("runAsNonRoot") is not True or not psc.get("runAsUser"):
        fail(f, "pod securityContext must set runAsNonRoot: true and a non-zero runAsUser")
    containers = [c for c in pod.get("containers", []) if c.get("name") == "ksm"]
    if len(containers) != 1:
        fail(f, "expected one container named ksm")
        return
    c = containers[0]
    if [str(a) for a in c.get("args", [])][:1] != ["speke"]:
        fail(f, "container args must start with `speke`")
    configmaps = {d["metadata"]["name"]: d.get("data", {}) for _, d in docs if d.get("kind") == "ConfigMap"}
    env = {}
    for ef in c.get("envFrom", []):
        name = get(ef, "configMapRef", "name")
        if name not in configmaps:
            fail(f, f"envFrom ConfigMap {name} is not in the kustomization")
        env.update(configmaps.get(name, {}))
    if [get(ef, "configMapRef", "name") for ef in c.get("envFrom", [])][:1] != ["ksm-config"]:
        fail(f, "the key provider reads the workers' ConfigMap ksm-config (KSM_KEK_FILES, KSM_LOG_FORMAT) first")
    secrets = {d["metadata"]["name"] for d in load_all(os.path.join(K8S, "secret.template.yaml"))}
    redis = [e for e in c.get("env", []) if e.get("name") == "KSM_REDIS_URL"]
    if not redis or get(redis[0], "valueFrom", "secretKeyRef", "name") != "ksm-redis":
        fail(f, "KSM_REDIS_URL must come from the ksm-redis Secret, as the workers'")
    for e in c.get("env", []):
        sname = get(e, "valueFrom", "secretKeyRef", "name")
        if sname and sname not in secrets:
            fail(f, f"env {e['name']} reads Secret {sname}, not in secret.template.yaml")
    ports = c.get("ports", [])
    port = ports[0] if len(ports) == 1 else {}
    listen = str(env.get("KSM_SPEKE_LISTEN", "0.0.0.0:8080"))
    if not port or listen.rsplit(":", 1)[-1] != str(port.get("containerPort")):
        fail(f, f"KSM_SPEKE_LISTEN {listen} is not the container's one port {port.get('containerPort')}")
    for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
        if get(c, probe, "httpGet", "path") != path or get(c, probe, "httpGet", "port") not in (port.get("name"), port.get("containerPort")):
            fail(f, f"{probe} must GET {path} on the container's port")
    grace = pod.get("terminationGracePeriodSeconds", 30)
    pause = get(c, "lifecycle", "preStop", "exec", "command", default=[])
    pause = int(pause[1]) if pause[:1] == ["/bin/sleep"] and len(pause) > 1 else 0
    if not pause:
        fail(f, "no preStop pause: the pod must leave the Service's endpoints before SIGTERM")
    if pause + SPEKE_DRAIN_SECONDS >= grace:
        fail(f, f"preStop {pause} s + the {SPEKE_DRAIN_SECONDS} s drain exceeds the {grace} s grace period")
    csc = c.get("securityContext", {})
    if csc.get("readOnlyRootFilesystem") is not True or csc.get("allowPrivilegeEscalation") is not False or \
            "ALL" not in get(csc, "capabilities", "drop", default=[]):
        fail(f, "container securityContext must be the workers': read-only root, no escalation, drop ALL")
    for kind in ("requests", "limits"):
        res = get(c, "resources", kind, default={})
        if "memory" not in res or (kind == "requests" and "cpu" not in res):
            fail(f, f"resources.{kind} must set cpu and memory")
    keks = [p.split("=", 1)[1] for p in str(env.get("KSM_KEK_FILES", "")).split(",") if "=" in p]
    if not keks:
        fail(f, "no KSM_KEK_FILES: the key provider wraps and unwraps under the tenants' KEKs")
    check_http_service_files(f, where, directory, pod, c, env, secrets, keks, "KSM_SPEKE")
    check_http_service_resources(where, docs, pod_labels, port, "ksm-speke", "the key provider's pods", {53, 6379}, "DNS and Redis")
    kinds = {d.get("kind") for _, d in docs if str(get(d, "metadata", "name", default="")).startswith("ksm-speke")}
    for kind in ("Service", "PodDisruptionBudget", "NetworkPolicy", "ConfigMap"):
        if kind not in kinds:
            fail(where, f"no ksm-speke {kind}")
    ok(f"key provider {where}: Deployment of {spec.get('replicas')} replicas, port {port.get('containerPort')}, "
       f"Service, PDB, NetworkPolicy")


def check_http_service_files(f, where, directory, pod, c, env, secrets, keks, prefix):
    """The files an HTTP service (`ksm speke`, `ksm edge`) reads: every volume mounted, every Secret
    volume in secret.template.yaml, the KEK files and the TLS files (set, or documented as
    commented-out `<prefix>_TLS_*` lines of its ConfigMap) under read-only Secret mounts, a writable
    /tmp, and no secret in its arguments."""
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
    for m in mounts.values():
        if m["name"] not in volumes:
            fail(f, f"volumeMount {m['name']} has no volume")
    for v in volumes.values():
        sname = get(v, "secret", "secretName")
        if sname and sname not in secrets:
            fail(f, f"volume {v['name']} mounts Secret {sname}, not in secret.template.yaml")

    def under_secret_mount(path):
        return any(path.startswith(mp.rstrip("/") + "/") and m.get("readOnly") and get(volumes.get(m["name"], {}), "secret")
                   for mp, m in mounts.items())
    names = (f"{prefix}_TLS_CERTIFICATE", f"{prefix}_TLS_PRIVATE_KEY")
    tls = [str(env[k]) for k in names if k in env]
    text = open(os.path.join(directory, "configmap.yaml"), encoding="utf-8").read()
    tls += re.findall(r'#\s+' + prefix + r'_TLS_(?:CERTIFICATE|PRIVATE_KEY): "([^"]+)"', text)
    if len(tls) != 2:
        fail(where, f"the TLS files ({names[0]}, {names[1]}) are neither set nor documented")
    for p in keks + tls:
        if not under_secret_mount(p):
            fail(f, f"{p} is not under a read-only Secret mount")
    if "/tmp" not in mounts:
        fail(f, "a read-only root filesystem wants a writable /tmp (emptyDir)")
    check_no_secret_in_args(f, pod)


def check_http_service_resources(where, docs, pod_labels, port, name_prefix, pods, egress_ports, egress_names):
    """The Service, PodDisruptionBudget and NetworkPolicy named `<name_prefix>*`: each selects the
    service's pods; the Service is a ClusterIP mapping port 80 to the container's; the policy
    restricts both directions, admits only the service's port and lets out only `egress_ports`."""
    for _, d in docs:
        kind, name = d.get("kind"), get(d, "metadata", "name")
        if name == "ksm-config" or kind not in ("Service", "PodDisruptionBudget", "NetworkPolicy"):
            continue
        if name and not name.startswith(name_prefix):
            continue
        selector = get(d, "spec", "selector") if kind == "Service" else get(d, "spec", "selector", "matchLabels") \
            if kind == "PodDisruptionBudget" else get(d, "spec", "podSelector", "matchLabels")
        if not labels_match(selector, pod_labels):
            fail(where, f"{kind} {name} does not select {pods}")
        if kind == "Service":
            if get(d, "spec", "type", default="ClusterIP") != "ClusterIP":
                fail(where, f"Service {name}: ClusterIP, reached through the ingress")
            sp = get(d, "spec", "ports", 0, default={})
            if sp.get("port") != 80 or sp.get("targetPort") not in (port.get("name"), port.get("containerPort")):
                fail(where, f"Service {name} must map port 80 to the container's port")
        if kind == "NetworkPolicy":
            if set(get(d, "spec", "policyTypes", default=[])) != {"Ingress", "Egress"}:
                fail(where, f"NetworkPolicy {name} must restrict both Ingress and Egress")
            for rule in get(d, "spec", "ingress", default=[]):
                allowed = [p.get("port") for p in rule.get("ports", [])]
                if not allowed or any(p not in (port.get("name"), port.get("containerPort")) for p in allowed):
                    fail(where, f"NetworkPolicy {name}: ingress to ports {allowed or 'all'}: only the service's port")
            egress = {p.get("port") for rule in get(d, "spec", "egress", default=[]) for p in rule.get("ports", [])}
            if any(not rule.get("ports") for rule in get(d, "spec", "egress", default=[])) or not egress_ports <= egress:
                fail(where, f"NetworkPolicy {name}: egress to {egress_names} only, by port (has {sorted(egress)})")


EDGE_DRAIN_SECONDS = 20


def reply_topic_allowed(topic, config):
    """Whether workers with the ConfigMap `config` answer to `topic` (ReplyTopicPolicy): the
    entries of KSM_REPLY_TOPICS (a name, or a prefix ending in *), else `<replies topic>.*`."""
    replies = str(config.get("KSM_REPLIES_TOPIC", "fps.license.replies"))
    entries = [e.strip() for e in str(config.get("KSM_REPLY_TOPICS", "")).split(",") if e.strip()]
    entries = [e.split(":", 1)[1] if ":" in e else e for e in entries] or [replies + ".*"]
    return topic == replies or any(topic.startswith(e[:-1]) if e.endswith("*") else topic == e for e in entries)


def check_edge():
    """deploy/kubernetes/edge: `ksm edge` with the workers' ConfigMap and Secrets, scaled by KEDA."""
    directory = os.path.join(K8S, "edge")
    where = rel(directory)
    docs = kustomize(directory)
    deployments = [(f, d) for f, d in docs if d.get("kind") == "Deployment"]
    if len(deployments) != 1:
        fail(where, f"expected one Deployment of `ksm edge`, found {len(deployments)}")
        return
    f, w = deployments[0]
    spec = w.get("spec", {})
    pod = get(spec, "template", "spec", default={})
    pod_labels = get(spec, "template", "metadata", "labels", default={})
    if not labels_match(get(spec, "selector", "matchLabels"), pod_labels):
        fail(f, "selector.matchLabels does not match the pod template's labels")
    if pod_labels.get("app.kubernetes.io/component") != "edge":
        fail(f, "pods must be labelled app.kubernetes.io/component: edge (the workers' policies select `worker`)")
    if "replicas" in spec:
        fail(f, "replicas is the autoscaler's (scaledobject.yaml): leave it out, so an apply never resets it")
    if get(spec, "strategy", "rollingUpdate", "maxUnavailable") != 0:
        fail(f, "rollingUpdate.maxUnavailable must be 0: a rollout never lowers the edges answering")
    psc = pod.get("securityContext", {})
    if psc.get("runAsNonRoot") is not True or not psc.get("runAsUser"):
        fail(f, "pod securityContext must set runAsNonRoot: true and a non-zero runAsUser")
    containers = [c for c in pod.get("containers", []) if c.get("name") == "ksm"]
    if len(containers) != 1:
        fail(f, "expected one container named ksm")
        return
    c = containers[0]
    if [str(a) for a in c.get("args", [])][:1] != ["edge"]:
        fail(f, "container args must start with `edge`")
    configmaps = {d["metadata"]["name"]: d.get("data", {}) for _, d in docs if d.get("kind") == "ConfigMap"}
    env = {}
    for ef in c.get("envFrom", []):
        name = get(ef, "configMapRef", "name")
        if name not in configmaps:
            fail(f, f"envFrom ConfigMap {name} is not in the kustomization")
        env.update(configmaps.get(name, {}))
    if [get(ef, "configMapRef", "name") for ef in c.get("envFrom", [])][:1] != ["ksm-config"]:
        fail(f, "the edge reads the workers' ConfigMap ksm-config (brokers, topics, KEK files, log format) first")
    secrets = {d["metadata"]["name"] for d in load_all(os.path.join(K8S, "secret.template.yaml"))}
    plain = {e.get("name"): e for e in c.get("env", [])}
    if get(plain.get("KSM_REDIS_URL", {}), "valueFrom", "secretKeyRef", "name") != "ksm-redis":
        fail(f, "KSM_REDIS_URL must come from the ksm-redis Secret, as the workers'")
    if get(plain.get("KSM_EDGE_INSTANCE_ID", {}), "valueFrom", "fieldRef", "fieldPath") != "metadata.name":
        fail(f, "KSM_EDGE_INSTANCE_ID must be the pod's name (downward API): each pod its own reply topic")
    if "KSM_EDGE_INSTANCE_ID" in env:
        fail(f, "KSM_EDGE_INSTANCE_ID in a ConfigMap would give every pod the same reply topic")
    for e in c.get("env", []):
        sname = get(e, "valueFrom", "secretKeyRef", "name")
        if sname and sname not in secrets:
            fail(f, f"env {e['name']} reads Secret {sname}, not in secret.template.yaml")
    # Topics: the edge produces to what the topics Job creates (the workers' ConfigMap names both,
    # so the edge's own must not rename them) and its reply topics lie inside what the workers
    # answer to.
    shared = ("KSM_KAFKA_BROKERS", "KSM_REQUESTS_TOPIC", "KSM_CLASS_TOPICS", "KSM_REPLIES_TOPIC", "KSM_REPLY_TOPICS",
              "KSM_KAFKA_PROPERTIES")
    overridden = [k for k in shared if k in configmaps.get("ksm-edge", {})]
    if overridden:
        fail(f, f"the ksm-edge ConfigMap overrides the workers' {', '.join(overridden)}: the topics Job and the workers would disagree")
    prefix = str(env.get("KSM_EDGE_REPLY_TOPIC_PREFIX", "fps.license.replies.edge."))
    if not reply_topic_allowed(prefix + "ksm-edge-7d9f8c6b5-x2x4z", env):
        fail(f, f"reply topics {prefix}<pod> are outside the workers' reply topics (KSM_REPLY_TOPICS / KSM_REPLIES_TOPIC.*)")
    if prefix.rstrip(".") in {env.get("KSM_REPLIES_TOPIC"), env.get("KSM_REQUESTS_TOPIC"), env.get("KSM_DLQ_TOPIC")}:
        fail(f, f"reply topic prefix {prefix} names a fleet topic")
    ports = c.get("ports", [])
    port = ports[0] if len(ports) == 1 else {}
    listen = str(env.get("KSM_EDGE_LISTEN", "0.0.0.0:8080"))
    if not port or listen.rsplit(":", 1)[-1] != str(port.get("containerPort")):
        fail(f, f"KSM_EDGE_LISTEN {listen} is not the container's one port {port.get('containerPort')}")
    for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
        if get(c, probe, "httpGet", "path") != path or get(c, probe, "httpGet", "port") not in (port.get("name"), port.get("containerPort")):
            fail(f, f"{probe} must GET {path} on the container's port")
    grace = pod.get("terminationGracePeriodSeconds", 30)
    pause = get(c, "lifecycle", "preStop", "exec", "command", default=[])
    pause = int(pause[1]) if pause[:1] == ["/bin/sleep"] and len(pause) > 1 else 0
    if not pause:
        fail(f, "no preStop pause: the pod must leave the Service's endpoints before SIGTERM")
    deadline = float(env.get("KSM_EDGE_DEADLINE", "5"))
    drain = max(EDGE_DRAIN_SECONDS, deadline + 5)
    if pause + drain >= grace:
        fail(f, f"preStop {pause} s + the {drain:g} s drain exceeds the {grace} s grace period")
    csc = c.get("securityContext", {})
    if csc.get("readOnlyRootFilesystem") is not True or csc.get("allowPrivilegeEscalation") is not False or \
            "ALL" not in get(csc, "capabilities", "drop", default=[]):
        fail(f, "container securityContext must be the workers': read-only root, no escalation, drop ALL")
    for kind in ("requests", "limits"):
        res = get(c, "resources", kind, default={})
        if "memory" not in res or "cpu" not in res:
            fail(f, f"resources.{kind} must set cpu and memory (the CPU trigger scales on the request)")
    keks = [p.split("=", 1)[1] for p in str(env.get("KSM_KEK_FILES", "")).split(",") if "=" in p]
    check_http_service_files(f, where, directory, pod, c, env, secrets, keks, "KSM_EDGE")
    check_http_service_resources(where, docs, pod_labels, port, "ksm-edge", "the edge's pods", {53, 9092, 6379}, "DNS, Kafka and Redis")
    for _, d in docs:
        name = str(get(d, "metadata", "name", default=""))
        if d.get("kind") == "PodDisruptionBudget" and name.startswith("ksm-edge") and \
                get(d, "spec", "maxUnavailable") != 1 and get(d, "spec", "minAvailable") != 1:
            fail(where, f"PodDisruptionBudget {name}: one edge at a time")
    kinds = {d.get("kind") for _, d in docs if str(get(d, "metadata", "name", default="")).startswith("ksm-edge")}
    for kind in ("Service", "PodDisruptionBudget", "NetworkPolicy", "ConfigMap", "ScaledObject"):
        if kind not in kinds:
            fail(where, f"no ksm-edge {kind}")
    if "HorizontalPodAutoscaler" in kinds:
        fail(where, "an HPA beside the ScaledObject: two autoscalers on one Deployment fight (hpa.yaml is the no-KEDA alternative)")
    ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": w["metadata"]["name"]}
    for sf, so in ((sf, d) for sf, d in docs if d.get("kind") == "ScaledObject"):
        sspec = so.get("spec", {})
        if so.get("apiVersion") != "keda.sh/v1alpha1":
            fail(sf, f"apiVersion {so.get('apiVersion')!r}, want keda.sh/v1alpha1")
        target = sspec.get("scaleTargetRef", {})
        if target.get("name") != ref["name"] or target.get("kind", "Deployment") != "Deployment":
            fail(sf, f"scaleTargetRef {target} is not the edge's Deployment")
        lo, hi = sspec.get("minReplicaCount", 0), sspec.get("maxReplicaCount", 100)
        if not (isinstance(lo, int) and isinstance(hi, int) and 2 <= lo <= hi):
            fail(sf, f"minReplicaCount {lo!r} / maxReplicaCount {hi!r}: at least 2 edges")
        triggers = sspec.get("triggers", [])
        cpu = [t for t in triggers if t.get("type") == "cpu"]
        if len(cpu) != 1 or cpu[0].get("metricType") != "Utilization" or not str(get(cpu[0], "metadata", "value", default="")).isdigit():
            fail(sf, "one cpu trigger, metricType Utilization, metadata.value a whole percentage (a string)")
        rate = [t for t in triggers if t.get("type") == "prometheus"]
        if len(rate) != 1:
            fail(sf, "one prometheus trigger on the request rate")
        for t in rate:
            md = t.get("metadata", {})
            for key in ("serverAddress", "query", "threshold"):
                if not isinstance(md.get(key), str) or not md.get(key):
                    fail(sf, f"prometheus trigger lacks metadata.{key} (a string)")
            query = str(md.get("query", ""))
            if "rate(ksm_edge_requests_total[" not in query or not query.startswith("sum("):
                fail(sf, "the request-rate trigger must be sum(rate(ksm_edge_requests_total[...])) over every edge")
        if "fallback" in sspec:
            fail(sf, "fallback: KEDA refuses it beside a cpu trigger")
        behavior = get(sspec, "advanced", "horizontalPodAutoscalerConfig", "behavior")
        if not isinstance(behavior, dict) or get(behavior, "scaleUp", "stabilizationWindowSeconds") != 0:
            fail(sf, "advanced.horizontalPodAutoscalerConfig.behavior must scale up at once (stabilizationWindowSeconds 0)")
        else:
            validate_hpa_behavior(sf, behavior, ref)
    # The no-KEDA alternative, not in the kustomization.
    hpa_path = os.path.join(directory, "hpa.yaml")
    if os.path.isfile(hpa_path):
        for d in load_all(hpa_path):
            if get(d, "spec", "scaleTargetRef", "name") != ref["name"] or get(d, "spec", "minReplicas", default=1) < 2:
                fail(rel(hpa_path), "the HPA must target ksm-edge with minReplicas >= 2")
            if not any(get(m, "resource", "name") == "cpu" for m in get(d, "spec", "metrics", default=[])):
                fail(rel(hpa_path), "the HPA must scale on CPU")
    ok(f"edge {where}: Deployment (KEDA: cpu and request rate), port {port.get('containerPort')}, reply topics {prefix}<pod>, "
       f"Service, PDB, NetworkPolicy")


def check_kubernetes():
    check_secret_template()
    for variant, kind in ((K8S, "Deployment"), (os.path.join(K8S, "statefulset"), "StatefulSet")):
        docs = kustomize(variant)
        where = rel(variant) or "."
        workloads = [(f, d) for f, d in docs if d.get("kind") in ("Deployment", "StatefulSet")]
        if len(workloads) != 1 or workloads[0][1]["kind"] != kind:
            fail(where, f"expected exactly one {kind}, found {[d.get('kind') for _, d in workloads]}")
            continue
        wfile, workload = workloads[0]
        check_workload(f"{wfile} ({kind})", workload, docs)
        check_no_secret_in_args(f"{wfile} ({kind})", get(workload, "spec", "template", "spec", default={}))
        cms = [d for _, d in docs if d.get("kind") == "ConfigMap"]
        configmap = cms[0].get("data", {}) if cms else {}
        check_configmap_production("deploy/kubernetes/common/configmap.yaml", configmap)
        sos = [(f, d) for f, d in docs if d.get("kind") == "ScaledObject"]
        if len(sos) != 1:
            fail(where, f"expected one ScaledObject, found {len(sos)}")
        for f, so in sos:
            check_scaledobject(f, so, workload, configmap)
        if not failures:
            ok(f"kubernetes {where}: {kind}, {len(docs)} resources, ScaledObject with kafka triggers and no cron")
    provision = kustomize(os.path.join(K8S, "provision"))
    for f, d in provision:
        if d.get("kind") == "Job":
            check_no_secret_in_args(f, get(d, "spec", "template", "spec", default={}))
    scaled = [d for _, d in kustomize(K8S) if d.get("kind") == "ScaledObject"]
    check_topics_job(get(scaled[0], "spec", "maxReplicaCount") if scaled else None)
    check_network_policy()
    check_speke()
    check_edge()
    check_event_window()
    for path in yaml_files(os.path.join(K8S, "optional")):
        for d in load_all(path):
            if d.get("kind") == "ServiceMonitor" and get(d, "spec", "endpoints", 0, "port") != "metrics":
                fail(rel(path), "ServiceMonitor must scrape the `metrics` port")


# ---------------------------------------------------------------------------------------------
# docker-compose.yml


def env_of(service):
    env = service.get("environment", {})
    if isinstance(env, list):
        env = dict(e.split("=", 1) if "=" in e else (e, None) for e in env)
    return env


def check_compose():
    path = os.path.join(DEPLOY, "docker-compose.yml")
    where = rel(path)
    base = os.path.dirname(path)
    compose = load_all(path)[0]
    services = compose.get("services", {})
    for name in ("kafka", "redis", "loadgen"):
        if name not in services:
            fail(where, f"no service {name}")
    kafka = services.get("kafka", {})
    kenv = env_of(kafka)
    if not str(kafka.get("image", "")).startswith("apache/kafka:"):
        fail(where, "kafka must use the apache/kafka image")
    if "controller" not in str(kenv.get("KAFKA_PROCESS_ROLES", "")) or any("ZOOKEEPER" in k for k in kenv):
        fail(where, "kafka must run in KRaft mode (process roles broker,controller; no ZooKeeper)")
    if not re.match(r"^redis:7(\.|-|$)", str(services.get("redis", {}).get("image", ""))):
        fail(where, "redis must be Redis 7")

    def is_ksm(s):
        return "build" in s or str(s.get("image", "")).startswith("fairplay-ksm")

    def command(s):
        c = s.get("command", [])
        return c.split() if isinstance(c, str) else c

    ksm = {n: s for n, s in services.items() if is_ksm(s)}
    workers = [n for n, s in ksm.items() if command(s)[:1] == ["serve"]]
    if len(workers) != 3:
        fail(where, f"expected three `ksm serve` workers, found {workers}")
    if command(services.get("loadgen", {}))[:1] != ["loadgen"]:
        fail(where, "service loadgen must run `ksm loadgen`")
    # Which flags exist is the binary's business: Tests/EndToEndTests/ComposeStackTests.swift runs
    # every ksm command line of this file through the real `ksm`.
    if "ksm-setup" not in ksm:
        fail(where, "no ksm-setup service (credentials at mode 600, demo catalogue seeded)")
    secrets = compose.get("secrets", {})
    for name, s in ksm.items():
        env = env_of(s)
        check_no_secret_in_args(where, {"containers": [{"name": name, "args": command(s)}]})
        for pair in str(env.get("KSM_KAFKA_PROPERTIES", "")).split(";"):
            if "=" in pair and SECRET_PROPERTY.search(pair.split("=", 1)[0]):
                fail(where, f"{name}: KSM_KAFKA_PROPERTIES carries the secret {pair.split('=', 1)[0]}; use KSM_KAFKA_PROPERTY_FILES")
        missing = [v for v in KSM_ENV if v not in env]
        if missing:
            fail(where, f"{name} lacks {', '.join(missing)}")
        if env.get("KSM_REQUESTS_TOPIC") != "fps.license.requests" or env.get("KSM_KAFKA_GROUP") != "fps-ksm":
            fail(where, f"{name}: requests topic / group differ from fps.license.requests / fps-ksm")
        targets = []
        for v in s.get("volumes", []):
            if isinstance(v, dict):
                src, tgt, ro = v.get("source"), v.get("target"), v.get("read_only")
            else:
                parts = v.split(":")
                src, tgt, ro = parts[0], parts[1], parts[2:] == ["ro"]
            if src.startswith((".", "/")) and not os.path.exists(os.path.join(base, src)):
                fail(where, f"{name}: bind source {src} does not exist")
            if not ro and not (name == "ksm-setup" and isinstance(v, dict) and v.get("type") == "volume"):
                fail(where, f"{name}: {tgt} should be mounted read-only")
            targets.append(tgt)
        for sec in s.get("secrets", []):
            sname = sec if isinstance(sec, str) else sec.get("source")
            if sname not in secrets:
                fail(where, f"{name}: secret {sname} is not declared")
            targets.append(f"/run/secrets/{sname}")
        files = [env.get("KSM_CREDENTIALS", "")]
        files += [p.split("=", 1)[1] for p in str(env.get("KSM_KEK_FILES", "")).split(",") if "=" in p]
        # kafka-init only talks to Kafka: it reads none of the files the others do.
        for f in files if name != "kafka-init" else []:
            if not any(f == t or f.startswith(t.rstrip("/") + "/") for t in targets):
                fail(where, f"{name}: {f} is not a mounted file")
        if name in workers and (s.get("depends_on", {}).get("ksm-setup") or {}).get("condition") != "service_completed_successfully":
            fail(where, f"{name} must wait for ksm-setup to complete")
        listen = {"speke": env.get("KSM_SPEKE_LISTEN"), "edge": env.get("KSM_EDGE_LISTEN")}.get(str((command(s) or [""])[0]))
        container_port = str(listen or "0.0.0.0:8080").rsplit(":", 1)[-1] if command(s)[:1] in (["speke"], ["edge"]) else "9090"
        for p in s.get("ports", []):
            if not re.match(rf"^127\.0\.0\.1:\d+:{container_port}$", str(p)):
                fail(where, f"{name}: port {p}: only admin ports, the key provider's and the edge's port, on 127.0.0.1")
        if name in workers:
            if "healthcheck" not in s:
                fail(where, f"{name}: no healthcheck")
            grace = str(s.get("stop_grace_period", "10s"))
            if not grace.endswith("s") or int(grace[:-1]) < 30:
                fail(where, f"{name}: stop_grace_period {grace} is shorter than 30 s")
    for name, secret in secrets.items():
        if not os.path.isfile(os.path.join(base, secret.get("file", ""))):
            fail(where, f"secret {name}: file {secret.get('file')} does not exist")
    for name, s in services.items():
        if not is_ksm(s) and s.get("ports"):
            fail(where, f"{name} publishes host ports; only the workers' admin ports, the key provider's and the edge's may")
        deps = s.get("depends_on", {})
        if isinstance(deps, list):
            deps = {d: {"condition": "service_started"} for d in deps}
        for dep, cond in deps.items():
            condition = (cond or {}).get("condition", "service_started")
            if dep not in services:
                fail(where, f"{name} depends on {dep}, which is not a service")
            elif condition == "service_healthy" and "healthcheck" not in services[dep]:
                fail(where, f"{name} waits for {dep} to be healthy, but {dep} has no healthcheck")
            elif condition == "service_completed_successfully" and services[dep].get("restart", "no") != "no":
                fail(where, f"{name} waits for {dep} to complete, but {dep} restarts")
            elif condition not in ("service_healthy", "service_completed_successfully", "service_started"):
                fail(where, f"{name}: unknown depends_on condition {condition}")
        if name in workers and not any(
                (deps.get(d) or {}).get("condition") == "service_healthy" for d in ("kafka", "redis")):
            fail(where, f"{name} must wait for healthy kafka and redis")
    # Topics: `ksm admin create-topics` with the workers' environment (topic names), as the
    # Kubernetes topics Job; ComposeStackTests runs it.
    init = [str(x) for x in command(services.get("kafka-init", {}))]
    if init[:2] != ["admin", "create-topics"] or "kafka-init" not in ksm:
        fail(where, "kafka-init must run `ksm admin create-topics` (the topics the workers read, by their names)")
    elif "--partitions" not in init or init[init.index("--partitions") + 1] != str(REQUEST_PARTITIONS):
        fail(where, f"kafka-init should give the request topics {REQUEST_PARTITIONS} partitions")
    ienv = env_of(services.get("kafka-init", {}))
    if {ienv.get(k) for k in ("KSM_REQUESTS_TOPIC", "KSM_REPLIES_TOPIC", "KSM_DLQ_TOPIC")} != TOPICS:
        fail(where, f"kafka-init must name the topics {sorted(TOPICS)} as the workers do")
    for name in workers:
        if env_of(services[name]).get("KSM_LOG_FORMAT") != "json":
            fail(where, f"{name}: KSM_LOG_FORMAT json, as in production")
    speke = services.get("speke", {})
    if command(speke)[:1] != ["speke"] or "speke" not in ksm:
        fail(where, "service speke must run `ksm speke`")
    else:
        listen = str(env_of(speke).get("KSM_SPEKE_LISTEN", "0.0.0.0:8080")).rsplit(":", 1)[-1]
        test = " ".join(str(t) for t in get(speke, "healthcheck", "test", default=[]))
        if "/readyz" not in test or f"/{listen}" not in test:
            fail(where, f"speke: the healthcheck must ask /readyz on the port it listens on ({listen})")
        if (speke.get("depends_on", {}).get("ksm-setup") or {}).get("condition") != "service_completed_successfully":
            fail(where, "speke must wait for ksm-setup to complete (the demo KEK it reads)")
        if not speke.get("ports"):
            fail(where, "speke publishes no port")
    edge = services.get("edge", {})
    if command(edge)[:1] != ["edge"] or "edge" not in ksm:
        fail(where, "service edge must run `ksm edge`")
    else:
        eenv = env_of(edge)
        listen = str(eenv.get("KSM_EDGE_LISTEN", "0.0.0.0:8080")).rsplit(":", 1)[-1]
        test = " ".join(str(t) for t in get(edge, "healthcheck", "test", default=[]))
        if "/readyz" not in test or f"/{listen}" not in test:
            fail(where, f"edge: the healthcheck must ask /readyz on the port it listens on ({listen})")
        for dep, condition in (("kafka", "service_healthy"), ("kafka-init", "service_completed_successfully"),
                               ("ksm-setup", "service_completed_successfully"), ("redis", "service_healthy")):
            if (edge.get("depends_on", {}).get(dep) or {}).get("condition") != condition:
                fail(where, f"edge must wait for {dep} ({condition}): the topics it produces to, the KEK it reads")
        if [str(p).rsplit(":", 1)[-1] for p in edge.get("ports", [])] != [listen]:
            fail(where, "edge must publish the one port it listens on")
        for key in ("KSM_KAFKA_BROKERS", "KSM_REQUESTS_TOPIC", "KSM_REDIS_URL"):
            if eenv.get(key) != ienv.get(key):
                fail(where, f"edge: {key} differs from the workers'")
        prefix = str(eenv.get("KSM_EDGE_REPLY_TOPIC_PREFIX", "fps.license.replies.edge."))
        if not reply_topic_allowed(prefix + str(eenv.get("KSM_EDGE_INSTANCE_ID", "edge")), eenv):
            fail(where, f"edge: reply topic {prefix}<instance> is outside the workers' reply topics")
        setup = " ".join(str(c) for c in command(services.get("ksm-setup", {})))
        if "put-certificate" not in setup:
            fail(where, "ksm-setup must store the demo tenant's certificate (ksm admin put-certificate): the edge serves it")
        grace = str(edge.get("stop_grace_period", "10s"))
        if not grace.endswith("s") or int(grace[:-1]) <= EDGE_DRAIN_SECONDS:
            fail(where, f"edge: stop_grace_period {grace} does not cover the {EDGE_DRAIN_SECONDS} s drain")
    build = next((s["build"] for s in ksm.values() if "build" in s), None)
    if not build or not os.path.isfile(os.path.join(base, build["context"], build["dockerfile"])):
        fail(where, "the ksm build context/dockerfile does not exist")
    ok(f"compose: {len(services)} services, workers {workers}, loadgen, kafka (KRaft), redis")


# ---------------------------------------------------------------------------------------------
# Dockerfile


def check_dockerfile():
    path = os.path.join(DEPLOY, "docker", "Dockerfile")
    where = rel(path)
    text = open(path, encoding="utf-8").read()
    lines = [l.strip() for l in re.sub(r"\\\n", " ", text).splitlines() if l.strip() and not l.strip().startswith("#")]
    froms = [l for l in lines if l.upper().startswith("FROM ")]
    if len(froms) < 2:
        fail(where, "not multi-stage")
    args = dict(re.findall(r"^ARG (\w+)=(\S+)", text, re.M))
    last = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), m.group(0)), froms[-1].split()[1])
    if last != "debian:bookworm-slim":
        fail(where, f"runtime stage is {last}, want debian:bookworm-slim")
    if "--static-swift-stdlib" not in text or "-c release" not in text:
        fail(where, "builder must run swift build -c release --static-swift-stdlib")
    users = [l.split()[1] for l in lines if l.upper().startswith("USER ")]
    if not users or users[-1].split(":")[0] in ("root", "0"):
        fail(where, "the final stage must run as a non-root user")
    if not any(l.upper().startswith("HEALTHCHECK") and "healthz" in l for l in lines):
        fail(where, "no HEALTHCHECK on /healthz")
    if not any(re.match(r"EXPOSE\s+9090\b", l) for l in lines):
        fail(where, "no EXPOSE 9090")
    for lib in ("librdkafka1", "libhiredis0.14", "libssl3", "libjemalloc2"):
        if lib not in text:
            fail(where, f"runtime lacks {lib}")
    if any(l.upper().startswith(("COPY", "ADD")) and "Fixtures" in l for l in lines):
        fail(where, "Fixtures/ must not be shipped in the image")
    ignore = os.path.join(ROOT, ".dockerignore")
    if not os.path.isfile(ignore):
        fail(".dockerignore", "missing (the build context is the repository root)")
    else:
        entries = open(ignore).read().split()
        for must in ("Fixtures", ".git"):
            if must not in entries:
                fail(".dockerignore", f"does not exclude {must}")
        if not any(".build" in e for e in entries):
            fail(".dockerignore", "does not exclude .build")
    ok("Dockerfile: multi-stage, bookworm-slim runtime, non-root, HEALTHCHECK, EXPOSE 9090")


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "check"
    if mode == "list-builtin":
        for f in builtin_manifests():
            print(rel(f))
        return 0
    for check in (check_kubernetes, check_compose, check_dockerfile):
        try:
            check()
        except Exception as error:  # a malformed file must fail the check, not crash it silently
            fail(check.__name__, f"{type(error).__name__}: {error}")
    for p in passes:
        print(f"ok: {p}")
    for f in failures:
        print(f"FAIL: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
