#!/usr/bin/env bash
# Runs bench/overhead/Steps.java against a listener jar (a program, not a test):
#
#   bench/overhead/steps.sh [JAR] [-Dsteps.dump=DIR] [-Dsteps.redaction=REGEX] [-Dsteps.rounds=N] [queries…]
#
# JAR defaults to this tree's Spark 3.5 listener jar (built if missing). Needs the Spark jars of
# dev/spark-sql (fetched on first use) and COLLINE_TPCDS_DIR (default dev/tpcds/data). STEPS_JAVA_OPTS adds JVM
# options, e.g. STEPS_JAVA_OPTS=-XX:StartFlightRecording=filename=steps.jfr,settings=profile for a profile.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
JARS="$ROOT/.cache/jars/spark-3.5_2.12"
TPCDS="${COLLINE_TPCDS_DIR:-$ROOT/dev/tpcds/data}"
JAR="$ROOT/listener/target/colline-listener-spark3.5_2.12-0.1.0.jar"
if [[ $# -gt 0 && $1 == *.jar ]]; then JAR=$1; shift; fi
props=()
while [[ $# -gt 0 && $1 == -D* ]]; do props+=("$1"); shift; done
if [ ! -f "$JARS/.fetched" ]; then
  echo 'SELECT 1;' >"${TMPDIR:-/tmp}/colline-steps-warm.sql"
  "$ROOT/dev/spark-sql" "${TMPDIR:-/tmp}/colline-steps-warm.sql" >/dev/null
fi
[ -f "$JAR" ] || mvn -B -q -f "$ROOT/listener/pom.xml" package -DskipTests
work="$(mktemp -d "${TMPDIR:-/tmp}/colline-steps.XXXXXX")"
# the warehouse path is in every event (table locations): the same for every run, so that two
# jars' dumps compare
warehouse="${TMPDIR:-/tmp}/colline-steps-warehouse"
rm -rf "$warehouse"
trap 'rm -rf "$work" "$warehouse"' EXIT
cp "$JAR" "$work/colline-listener.jar"
javac -nowarn -cp "$work/colline-listener.jar:$JARS/*" -d "$work" "$ROOT/bench/overhead/Steps.java"
java ${STEPS_JAVA_OPTS:-} -XX:+IgnoreUnrecognizedVMOptions \
  --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.lang.invoke=ALL-UNNAMED \
  --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
  --add-opens=java.base/java.util=ALL-UNNAMED -Xmx2g \
  -Dlog4j2.configurationFile="$ROOT/dev/spark/log4j2.properties" -Djava.io.tmpdir="$work" -Dsteps.warehouse="$warehouse" "${props[@]}" \
  -cp "$work/colline-listener.jar:$JARS/*:$work" Steps "$TPCDS" "$@"
