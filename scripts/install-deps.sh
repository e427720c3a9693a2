#!/usr/bin/env bash
# Installs the C libraries FairPlayKSM links (OpenSSL 3, librdkafka, hiredis, jemalloc), redis-server and gdb
# (the test watchdog prints a hung run's stacks with it),
# from Debian 12's packages. Swift 6 itself is expected on PATH.
set -euo pipefail
if [ "$(id -u)" = "0" ]; then SUDO=""; else SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq libssl-dev librdkafka-dev libhiredis-dev libjemalloc-dev redis-server pkg-config gdb >/dev/null
# promtool (Debian's prometheus package) for the suite's alert-rule and /metrics checks.
$SUDO apt-get install -y -qq --no-install-recommends prometheus >/dev/null

# Python tools for scripts/validate-deploy.sh (offline validation of deploy/): yamllint,
# kubernetes-validate and PyYAML from PyPI; jsonschema for the schema tests; cpix (the DASH-IF CPIX
# XSDs and an independent CPIX reader) and lxml for the CPIX checks (CPIXSchemaCheck). cpix imports
# pkg_resources and requires setuptools<71; the pin is named here so it is seen (Debian 12's
# setuptools 66 satisfies it and stays). pip comes from apt when the python3 has none.
if ! command -v python3 >/dev/null 2>&1 || ! python3 -m pip --version >/dev/null 2>&1; then
    $SUDO apt-get install -y -qq python3 python3-pip >/dev/null
fi
if ! python3 -c 'import yaml, yamllint, kubernetes_validate, jsonschema, lxml, cpix' >/dev/null 2>&1; then
    # Debian 12's system python refuses plain pip installs (PEP 668, "externally managed").
    if python3 -c 'import sys, sysconfig, os; sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")) else 1)'; then
        PIP_EXTRA="--break-system-packages"
    else
        PIP_EXTRA=""
    fi
    $SUDO python3 -m pip install --quiet $PIP_EXTRA yamllint kubernetes-validate pyyaml jsonschema lxml cpix 'setuptools<71'
fi
