// Per-step cost of the colline listener on TPC-DS plans, in one JVM (no Kafka): building the event,
// the redaction pass (scrub), rendering the bytes, and zstd at Kafka's default level 3 (what the
// producer does to the batch, with zstd-jni from Spark's jars). Not a test; docs/benchmarks.md
// quotes a run. Arguments: the TPC-DS directory, then optionally queries (default: ten of the largest).
//
//   javac -cp 'listener/target/colline-listener-spark3.5_2.12-0.1.0.jar:.cache/jars/spark-3.5_2.12/*' -d /tmp/steps bench/overhead/Steps.java
//   java --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED \
//     --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED \
//     --add-opens=java.base/java.lang.invoke=ALL-UNNAMED \
//     -cp 'listener/target/colline-listener-spark3.5_2.12-0.1.0.jar:.cache/jars/spark-3.5_2.12/*:/tmp/steps' Steps ../shared/data/tpcds
import java.nio.file.*;
import java.util.*;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import io.colline.listener.*;

public class Steps {
  public static void main(String[] a) throws Exception {
    Path tpcds = Path.of(a.length > 0 ? a[0] : "../shared/data/tpcds");
    SparkSession spark = SparkSession.builder().master("local[1]").config("spark.ui.enabled","false")
      .config("spark.sql.catalogImplementation","in-memory").config("spark.sql.warehouse.dir",System.getProperty("java.io.tmpdir") + "/colline-steps-warehouse").getOrCreate();
    spark.sql("CREATE DATABASE tpcds"); spark.sql("USE tpcds");
    for (String stmt : Files.readString(tpcds.resolve("ddl.sql")).split(";\\s*\\n")) {
      String s = stmt.replaceAll("(?m)^\\s*--.*$", "").strip(); if (!s.isEmpty()) spark.sql(s);
    }
    List<LogicalPlan> plans = new ArrayList<>();
    String[] names = a.length > 1 ? Arrays.copyOfRange(a, 1, a.length)
        : new String[]{"q1","q5","q14a","q23a","q47","q64","q72","q77","q80","q95"};
    for (String q : names) {
      String sql = Files.readString(tpcds.resolve("queries/" + q + ".sql")).replaceAll("(?m)^\\s*--.*$", "").strip();
      plans.add(spark.sql(sql).queryExecution().analyzed());
    }
    Config cfg = Config$.MODULE$.from(new org.apache.spark.SparkConf());
    int rounds = Integer.getInteger("steps.rounds", 6); // -Dsteps.rounds=N: longer runs for a profiler
    for (int round = 0; round < rounds; round++) {
      long tb = 0, ts = 0, tj = 0, tz = 0, bytes = 0, zbytes = 0;
      for (int i = 0; i < 20; i++) for (LogicalPlan p : plans) {
        Pending pd = new Pending("command", p, 1L, true, scala.Option.empty(), scala.Option.empty(), 0L, "app", "n", "u", scala.Option.empty(), false);
        long t0 = System.nanoTime();
        Built b = EventBuilder$.MODULE$.build(pd, scala.Option.empty(), cfg);
        long t1 = System.nanoTime();
        J.Obj json = ((Event) b).json();
        Scrub$.MODULE$.event(json);
        long t2 = System.nanoTime();
        byte[] out = J$.MODULE$.toBytes(json, false);
        long t3 = System.nanoTime();
        byte[] z = com.github.luben.zstd.Zstd.compress(out, 3);
        long t4 = System.nanoTime();
        tb += t1 - t0; ts += t2 - t1; tj += t3 - t2; tz += t4 - t3; bytes += out.length; zbytes += z.length;
      }
      int n = 20 * plans.size();
      System.out.printf(Locale.ROOT, "round %d: build %.3f ms, scrub %.3f ms, toBytes %.3f ms, zstd-3 %.3f ms per event; %d bytes avg, %d compressed%n",
          round, tb/1e6/n, ts/1e6/n, tj/1e6/n, tz/1e6/n, bytes/n, zbytes/n);
    }
  }
}
