# Sourced by dev/spark-sql and dev/spark-analyze (bash): the Spark line, its jars and listener jar,
# and the JVM flags of a local Spark. Reads ROOT and SPARK_LINE (default 3.5_2.12); sets PROFILE,
# FLAGS, JARS (the Spark jars folder), LISTENER_JAR and JAVA17_OPTS; `spark_prepare` fetches the
# jars once and builds the listener jar when it is missing or older than its sources.
SPARK_LINE="${SPARK_LINE:-3.5_2.12}"
row="$("$ROOT/dev/spark-lines" get "$SPARK_LINE")" || { echo "$(basename "$0"): set SPARK_LINE to one of them" >&2; exit 2; }
read -r _ PROFILE FLAGS <<<"$row"
JARS="$ROOT/.cache/jars/spark-$SPARK_LINE"
LISTENER_JAR="$ROOT/listener/target/colline-listener-spark${SPARK_LINE}-0.1.0.jar"

spark_prepare() {
  local nohive=()
  [[ " $FLAGS " == *" nohive "* ]] && nohive=(-Dnohive)
  "$ROOT/dev/fetch-jars" "$ROOT/dev/spark/pom.xml" "$JARS" -P"$PROFILE" ${nohive[@]+"${nohive[@]}"}
  if [ ! -f "$LISTENER_JAR" ] || [ -n "$(find "$ROOT/listener/src" "$ROOT/listener/pom.xml" -newer "$LISTENER_JAR" -print -quit)" ]; then
    echo "$(basename "$0"): building the listener jar for Spark $SPARK_LINE" >&2
    mvn -B -q -f "$ROOT/listener/pom.xml" -P"$PROFILE" package -DskipTests >&2
  fi
}

JAVA17_OPTS=(
  -XX:+IgnoreUnrecognizedVMOptions
  --add-opens=java.base/java.lang=ALL-UNNAMED
  --add-opens=java.base/java.lang.invoke=ALL-UNNAMED
  --add-opens=java.base/java.lang.reflect=ALL-UNNAMED
  --add-opens=java.base/java.io=ALL-UNNAMED
  --add-opens=java.base/java.net=ALL-UNNAMED
  --add-opens=java.base/java.nio=ALL-UNNAMED
  --add-opens=java.base/java.util=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED
  --add-opens=java.base/jdk.internal.ref=ALL-UNNAMED
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
  --add-opens=java.base/sun.nio.cs=ALL-UNNAMED
  --add-opens=java.base/sun.security.action=ALL-UNNAMED
  --add-opens=java.base/sun.util.calendar=ALL-UNNAMED
  --add-opens=java.security.jgss/sun.security.krb5=ALL-UNNAMED
  -Djdk.reflect.useDirectMethodHandle=false
  -Dio.netty.tryReflectionSetAccessible=true
)
