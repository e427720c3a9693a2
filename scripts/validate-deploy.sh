#!/usr/bin/env bash
# Offline validation of deploy/: no cluster, no Docker engine, no network beyond PyPI (only when a
# tool is missing). Exits non-zero with a message naming every failure.
#
#   1. yamllint (strict: warnings fail) over deploy/ with deploy/.yamllint
#   2. kubernetes-validate --strict over the Kubernetes manifests of built-in kinds, against the
#      oldest and newest Kubernetes versions we support (CRDs such as KEDA's are checked in 3)
#   3. scripts/check-deploy.py: kustomizations, cross-references, the KEDA ScaledObject (whose HPA
#      behavior is validated as a real autoscaling/v2 HPA; no cron trigger but in the event-window
#      example), the topics Job, the NetworkPolicy, the key provider (deploy/kubernetes/speke), the
#      edge (deploy/kubernetes/edge: KEDA on CPU and request rate, per-pod reply topics), no
#      secret in args, JSON logs, docker-compose.yml's structure, the Dockerfile
#   3b. scripts/check-observability.py: the Grafana dashboard JSON and the Prometheus alert rules
#      (structure, durations, only metrics the worker exports, the namespace variable in every
#      query, lag by topic and partition, alerts and panels for drops and dead letters); with
#      promtool installed, `promtool check rules` and `promtool test rules` too
#   4. if present on the machine: `kubectl kustomize` builds every kustomization, `docker compose config`
#      parses the compose file (skipped with a note otherwise)
set -uo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
K8S_VERSIONS=("1.27" "1.37")
status=0
failed() { echo "validate-deploy: FAILED: $*" >&2; status=1; }
step() { echo "== $*"; }

command -v "$PYTHON" >/dev/null 2>&1 || { echo "validate-deploy: $PYTHON not found (apt-get install python3)" >&2; exit 2; }

# --- tools: yamllint, kubernetes-validate, PyYAML --------------------------------------------------
have_tools() { "$PYTHON" -c 'import yaml, yamllint, kubernetes_validate' >/dev/null 2>&1; }
if ! have_tools; then
    step "installing yamllint, kubernetes-validate, pyyaml from PyPI"
    if ! "$PYTHON" -m pip --version >/dev/null 2>&1; then
        echo "validate-deploy: pip is missing for $PYTHON; run scripts/install-deps.sh (installs python3-pip)" >&2
        exit 2
    fi
    pip_log=$(mktemp)
    if ! "$PYTHON" -m pip install --quiet yamllint kubernetes-validate pyyaml >"$pip_log" 2>&1; then
        # Debian 12's system python is "externally managed" (PEP 668).
        if grep -qi "externally-managed-environment" "$pip_log"; then
            "$PYTHON" -m pip install --quiet --break-system-packages yamllint kubernetes-validate pyyaml >"$pip_log" 2>&1
        fi
    fi
    have_tools || { cat "$pip_log" >&2; rm -f "$pip_log"; echo "validate-deploy: could not install the Python tools" >&2; exit 2; }
    rm -f "$pip_log"
fi
echo "tools: yamllint $("$PYTHON" -m yamllint --version | awk '{print $2}'), kubernetes-validate $("$PYTHON" -m kubernetes_validate --version)"

# --- 1. yamllint ----------------------------------------------------------------------------------
step "yamllint -c deploy/.yamllint deploy/"
"$PYTHON" -m yamllint --strict -c deploy/.yamllint deploy/ || failed "yamllint"

# --- 2. kubernetes-validate over built-in kinds -----------------------------------------------------
mapfile -t manifests < <("$PYTHON" scripts/check-deploy.py list-builtin)
if [ "${#manifests[@]}" -eq 0 ]; then
    failed "no Kubernetes manifests of built-in kinds found under deploy/kubernetes"
else
    for v in "${K8S_VERSIONS[@]}"; do
        step "kubernetes-validate --strict -k $v (${#manifests[@]} files)"
        out=$("$PYTHON" -m kubernetes_validate --strict --quiet -k "$v" "${manifests[@]}" 2>&1)
        rc=$?
        [ -n "$out" ] && echo "$out"
        # Unknown schemas only warn; a built-in kind must always validate, so a warning fails too.
        if [ $rc -ne 0 ] || grep -qE "^(ERROR|WARN)" <<<"$out"; then failed "kubernetes-validate (Kubernetes $v)"; fi
    done
fi

# --- 3. structure: ScaledObject, cross-references, compose, Dockerfile ------------------------------
step "scripts/check-deploy.py check"
"$PYTHON" scripts/check-deploy.py check || failed "structural checks (scripts/check-deploy.py)"

step "scripts/check-observability.py"
"$PYTHON" scripts/check-observability.py || failed "dashboard / alert rules (scripts/check-observability.py)"

if command -v promtool >/dev/null 2>&1; then
    step "promtool check rules / test rules (deploy/observability)"
    (cd deploy/observability && promtool check rules prometheus-alerts.yaml && promtool test rules prometheus-alerts.test.yaml) \
        || failed "promtool (deploy/observability/prometheus-alerts*.yaml)"
else
    echo "note: promtool not found; alert rules checked structurally only (AlertRuleTests runs promtool)"
fi

# --- 4. optional tools ------------------------------------------------------------------------------
if command -v kubectl >/dev/null 2>&1 && kubectl kustomize --help >/dev/null 2>&1; then
    for dir in deploy/kubernetes deploy/kubernetes/statefulset deploy/kubernetes/provision deploy/kubernetes/topics \
               deploy/kubernetes/speke deploy/kubernetes/edge deploy/examples/event-window; do
        step "kubectl kustomize $dir"
        if out=$(kubectl kustomize "$dir" 2>&1); then
            echo "$(grep -c '^kind:' <<<"$out") resources"
        else
            echo "$out"; failed "kubectl kustomize $dir"
        fi
    done
else
    echo "note: kubectl not found; kustomize builds not checked (resource paths are checked in step 3)"
fi
if docker compose version >/dev/null 2>&1; then
    step "docker compose config"
    docker compose -f deploy/docker-compose.yml config --quiet || failed "docker compose config"
else
    echo "note: docker compose not found; compose file checked structurally only (step 3)"
fi

if [ $status -ne 0 ]; then
    echo "validate-deploy: deploy/ is NOT valid (see FAILED lines above)" >&2
    exit 1
fi
echo "validate-deploy: all checks passed"
