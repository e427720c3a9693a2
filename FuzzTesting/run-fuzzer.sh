#!/usr/bin/env bash
# Builds the libFuzzer target with address sanitizer and runs it.
# Usage: FuzzTesting/run-fuzzer.sh [SECONDS] [extra libFuzzer flags...]
# Crashes are written to FuzzTesting/FailCases/; add each as a unit test in Tests/FairPlayTests.
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-60}"; shift || true
swift build -c debug -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library --product FuzzSPC
corpus="$(mktemp -d)"
# Seed the corpus with Apple's SPCs when ../shared is beside the checkout.
for f in ../../shared/vectors/apple-sdk-2.0.3/FPS*/spc*.bin; do [ -f "$f" ] && cp "$f" "$corpus/"; done
"$(swift build -c debug -Xswiftc -sanitize=fuzzer,address --show-bin-path)/FuzzSPC" \
  -max_total_time="$seconds" -max_len=70000 -artifact_prefix=FailCases/ "$@" "$corpus"
