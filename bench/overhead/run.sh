#!/usr/bin/env bash
# Driver overhead of the colline listener vs no listener vs OpenLineage, on TPC-DS CTAS over the
# empty schema plus a small job on real rows, in one Spark 3.5 / Scala 2.12 run (a program, not a test).
#
#   bench/overhead/run.sh [rounds]          (default 1 round; see Overhead.java for what is measured)
#
# Environment: BENCH_KAFKA (bootstrap, default 127.0.0.1:19092; "-" = no Kafka: events are built and
# dropped), BENCH_TOPIC (default colline.bench.overhead, created if missing), BENCH_QUERIES (subset,
# e.g. "q1 q2"), COLLINE_TPCDS_DIR (default dev/tpcds/data), BENCH_LISTENER_JAR (the colline listener jar
# to measure, default the one of this tree, built if missing: point it at another tree's jar to compare two).
# Needs: the Spark jars of dev/spark-sql (fetched on first use), the listener jar (built if missing),
# io.openlineage:openlineage-spark_2.12:1.53.0 (fetched into ~/.m2 if missing).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TPCDS="${COLLINE_TPCDS_DIR:-$ROOT/dev/tpcds/data}"
JARS="$ROOT/.cache/jars/spark-3.5_2.12"
LISTENER="${BENCH_LISTENER_JAR:-$ROOT/listener/target/colline-listener-spark3.5_2.12-0.1.0.jar}"
OL_VERSION=1.53.0
OL="$HOME/.m2/repository/io/openlineage/openlineage-spark_2.12/$OL_VERSION/openlineage-spark_2.12-$OL_VERSION.jar"
KAFKA="${BENCH_KAFKA:-127.0.0.1:19092}"
TOPIC="${BENCH_TOPIC:-colline.bench.overhead}"

if [ ! -f "$JARS/.fetched" ]; then
  echo 'SELECT 1;' >"${TMPDIR:-/tmp}/colline-bench-warm.sql"
  "$ROOT/dev/spark-sql" "${TMPDIR:-/tmp}/colline-bench-warm.sql" >/dev/null
fi
if [ -n "${BENCH_LISTENER_JAR:-}" ]; then
  [ -f "$LISTENER" ] || { echo "bench/overhead/run.sh: BENCH_LISTENER_JAR=$LISTENER: no such file" >&2; exit 2; }
else
  [ -f "$LISTENER" ] || mvn -B -q -f "$ROOT/listener/pom.xml" package -DskipTests
fi
echo "listener jar: $LISTENER ($(sha256sum "$LISTENER" | cut -c1-12))"
[ -f "$OL" ] || mvn -B -q org.apache.maven.plugins:maven-dependency-plugin:3.8.1:get \
  -Dartifact=io.openlineage:openlineage-spark_2.12:$OL_VERSION -Dtransitive=false
if [ "$KAFKA" != "-" ]; then
  java -Xmx256m -cp "$ROOT/.cache/jars/kafka/*" org.apache.kafka.tools.TopicCommand --bootstrap-server "$KAFKA" \
    --create --if-not-exists --topic "$TOPIC" --partitions 1 --replication-factor 1 \
    --config max.message.bytes=16777216 >/dev/null
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/colline-overhead.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cp "$LISTENER" "$work/colline-listener.jar"
export SPARK_LOCAL_IP=127.0.0.1
java -XX:+IgnoreUnrecognizedVMOptions \
  --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.lang.invoke=ALL-UNNAMED \
  --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED \
  --add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED \
  --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED \
  --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED --add-opens=java.base/jdk.internal.ref=ALL-UNNAMED \
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/sun.nio.cs=ALL-UNNAMED \
  --add-opens=java.base/sun.security.action=ALL-UNNAMED --add-opens=java.base/sun.util.calendar=ALL-UNNAMED \
  -Djdk.reflect.useDirectMethodHandle=false -Dio.netty.tryReflectionSetAccessible=true \
  -Xms512m -Xmx3g -XX:+UseG1GC \
  -Dlog4j2.configurationFile="$ROOT/dev/spark/log4j2.properties" \
  -Dbench.topic="$TOPIC" -Dbench.queries="${BENCH_QUERIES:-}" \
  -cp "$work/colline-listener.jar:$OL:$JARS/*" \
  "$ROOT/bench/overhead/Overhead.java" "$work" "$TPCDS" "$KAFKA" "${1:-1}"
