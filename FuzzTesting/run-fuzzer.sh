#!/usr/bin/env bash
# Builds a libFuzzer target with address sanitizer and runs it.
# Usage: FuzzTesting/run-fuzzer.sh [TARGET] [SECONDS] [extra libFuzzer flags...]
#   TARGET: FuzzSPC (default: SPC container, TLLVs, D function), FuzzLicenseJob (JSONParser and
#   LicenseJob(json:), the job decoder every Kafka message goes through) or FuzzRedisReply (bytes
#   from a Redis server through hiredis's reader into RedisValue, then the cluster slot map, the
#   MOVED/ASK parser and the lease/stored-reply/hash decoders) or FuzzCPIX (bytes through the
#   hostile-safe XML reader, SPEKE request validation, the answer and its read-back) or FuzzLicenseHTTP
#   (a player's HTTP body through the edge's request codec, LicenseHTTPRequest, and its answers).
# Crashes are written to FuzzTesting/FailCases/; add each as a unit test (Tests/FairPlayTests for
# SPCs, Tests/KSMServiceTests/JobDecoderMutationTests.swift for jobs, Tests/RedisStoreTests
# (Malformed*Tests, ReplyMutationTests) for Redis replies, Tests/SpekeTests for CPIX documents,
# Tests/KSMServiceTests/LicenseHTTPRequestTests.swift for edge request bodies).
set -euo pipefail
cd "$(dirname "$0")"
target="FuzzSPC"
case "${1:-}" in Fuzz*) target="$1"; shift ;; esac
seconds="${1:-60}"; shift || true
mkdir -p FailCases
# Tools version 5.3 passes no package name, which `package` declarations need.
flags=(-c debug -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -package-name -Xswiftc FairPlayKSMFuzzing)
swift build "${flags[@]}" --product "$target"
corpus="$(mktemp -d)"
case "$target" in
  FuzzSPC)
    # Seed the corpus with Apple's SPCs when ../shared is beside the checkout.
    for f in ../../shared/vectors/apple-sdk-2.0.3/FPS*/spc*.bin; do [ -f "$f" ] && cp "$f" "$corpus/"; done
    max_len=70000 ;;
  FuzzLicenseJob)
    # Seed with the job examples and a few hand-written envelopes.
    for f in ../Examples/*.json ../schemas/examples/*job*.json; do [ -f "$f" ] && cp "$f" "$corpus/"; done
    printf '%s' '{"id":"j-1","tenant":"acme","account":"alice","spc":"AAAA"}' > "$corpus/minimal.json"
    printf '%s' '{"id":"j-2","tenant":"acme","account":"a","spc":"AAAA","deadline":1700000000000,"priority":"continuity","entitlement":"x.y.z","persistent":true,"stream-id":"00112233445566778899aabbccddeeff"}' > "$corpus/full.json"
    max_len=300000 ;;
  FuzzRedisReply)
    # Real CLUSTER SHARDS/SLOTS replies of a Redis 7.0 cluster, redirects, lease and stored replies
    # (the same seeds ReplyMutationTests mutates).
    cp Seeds/FuzzRedisReply/*.resp "$corpus/"
    set -- -dict=Seeds/FuzzRedisReply.dict "$@"
    max_len=65536 ;;
  FuzzCPIX)
    # AWS's FairPlay request and a SPEKE v2.1 one-key request; the dictionary holds CPIX's names.
    cp Seeds/FuzzCPIX/*.xml "$corpus/"
    set -- -dict=Seeds/FuzzCPIX.dict "$@"
    # FoundationXML's own leak per malformed document (see the file); every other leak still fails.
    export LSAN_OPTIONS="suppressions=$PWD/Seeds/FuzzCPIX.lsan${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
    max_len=65536 ;;
  FuzzLicenseHTTP)
    # One body of each request shape (base64 of a 20-byte stand-in with an SPC v2 header), plus the
    # dictionary of the shapes' names.
    spc='AAAAAgAAAAAAAAAAAAAAAAAAAAA='
    printf '%s' "$spc" > "$corpus/base64.txt"
    printf '\0\0\0\2\0\0\0\0abcdefgh' > "$corpus/raw.bin"
    printf '%s' "spc=$spc&assetId=twelve" > "$corpus/form.txt"
    printf '%s' "spc%3D${spc%=}%3D" > "$corpus/form-encoded.txt"
    printf '%s' "{\"spc\":\"$spc\",\"asset-id\":\"skd://twelve\",\"priority\":\"new\"}" > "$corpus/json.json"
    printf '%s' "{\"fairplay-streaming-request\":{\"version\":1,\"streaming-keys\":[{\"id\":1,\"uri\":\"skd://twelve\",\"spc\":\"$spc\"}]}}" > "$corpus/apple.json"
    set -- -dict=Seeds/FuzzLicenseHTTP.dict "$@"
    max_len=8192 ;;
  *) echo "unknown target $target" >&2; exit 2 ;;
esac
"$(swift build "${flags[@]}" --show-bin-path)/$target" \
  -max_total_time="$seconds" -max_len="$max_len" -artifact_prefix=FailCases/ "$@" "$corpus"
