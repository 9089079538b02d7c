#!/usr/bin/env bash
# The events two listener jars send for every TPC-DS CTAS, compared byte for byte (a check for
# changes of the serializer that must not change the event; not a test):
#
#   bench/overhead/bytes.sh BEFORE.jar [AFTER.jar]
#
# Each jar seals the events of the 103 queries (bench/overhead/Steps.java, -Dsteps.dump), once as
# they are and once with Spark's string redaction regex set, and the dumps are compared with
# `cmp`; event id, emission time and JVM id are replaced by fixed values in both. AFTER defaults
# to this tree's jar. Exit status 0: identical.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BEFORE=${1:?usage: bench/overhead/bytes.sh BEFORE.jar [AFTER.jar]}
AFTER=${2:-$ROOT/listener/target/colline-listener-spark3.5_2.12-0.1.0.jar}
out="$(mktemp -d "${TMPDIR:-/tmp}/colline-bytes.XXXXXX")"
trap 'rm -rf "$out"' EXIT
status=0
for variant in plain redacted; do
  props=()
  [[ $variant == redacted ]] && props=(-Dsteps.redaction='(?i)tpcds|store_sales|\d{4}')
  for side in before after; do
    jar=$BEFORE; [[ $side == after ]] && jar=$AFTER
    "$ROOT/bench/overhead/steps.sh" "$jar" -Dsteps.dump="$out/$variant-$side" "${props[@]}" | grep '^dumped'
  done
  n=0; differ=0; bytes=0
  for f in "$out/$variant-before"/*.json; do
    n=$((n + 1)); bytes=$((bytes + $(stat -c %s "$f")))
    cmp -s "$f" "$out/$variant-after/$(basename "$f")" || { differ=$((differ + 1)); echo "differs: $variant $(basename "$f")"; }
  done
  [[ $(ls "$out/$variant-after" | wc -l) == "$n" ]] || { echo "$variant: the dumps hold different files"; differ=$((differ + 1)); }
  echo "$variant: $n events ($bytes bytes), $differ differ"
  ((differ == 0)) || status=1
done
exit $status
