#!/usr/bin/env bash
# Installs the C libraries FairPlayKSM links (OpenSSL 3, librdkafka, hiredis) and redis-server,
# from Debian 12's packages. Swift 6 itself is expected on PATH.
set -euo pipefail
if [ "$(id -u)" = "0" ]; then SUDO=""; else SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq libssl-dev librdkafka-dev libhiredis-dev redis-server pkg-config >/dev/null
