// Per-step cost of the colline listener's publisher thread on TPC-DS CTAS plans, in one JVM (no
// Kafka): building the event, sealing it (the redaction pass and the bytes, as Publisher.publish
// does), and zstd at Kafka's default level 3 (what the producer does to the batch, with zstd-jni
// from Spark's jars). Not a test; docs/benchmarks.md quotes runs. With -Dsteps.dump=DIR it also
// writes each query's sealed event (the bytes the publisher sends) to DIR/<query>.json, with the
// event id, emission time and JVM id replaced by fixed values: two jars' dumps must be equal byte
// for byte (bench/overhead/bytes.sh compares them). -Dsteps.redaction=REGEX sets Spark's
// spark.sql.redaction.string.regex for the events, -Dsteps.rounds=N the rounds.
//
//   javac -cp 'listener/target/colline-listener-spark3.5_2.12-0.1.0.jar:.cache/jars/spark-3.5_2.12/*' -d /tmp/steps bench/overhead/Steps.java
//   java <the --add-opens of run.sh> \
//     -cp 'listener/target/colline-listener-spark3.5_2.12-0.1.0.jar:.cache/jars/spark-3.5_2.12/*:/tmp/steps' Steps dev/tpcds/data [queries…]
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import java.util.regex.Pattern;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.execution.CommandExecutionMode;
import io.colline.listener.*;

public class Steps {
  public static void main(String[] a) throws Exception {
    Path tpcds = Path.of(a.length > 0 ? a[0] : "dev/tpcds/data");
    String dump = System.getProperty("steps.dump", "");
    SparkSession spark = SparkSession.builder().master("local[1]").config("spark.ui.enabled","false")
      .config("spark.sql.catalogImplementation","in-memory").config("spark.sql.warehouse.dir",System.getProperty("steps.warehouse", System.getProperty("java.io.tmpdir") + "/colline-steps-warehouse")).getOrCreate();
    spark.sql("CREATE DATABASE tpcds"); spark.sql("USE tpcds");
    for (String stmt : Files.readString(tpcds.resolve("ddl.sql")).split(";\\s*\\n")) {
      String s = stmt.replaceAll("(?m)^\\s*--.*$", "").strip(); if (!s.isEmpty()) spark.sql(s);
    }
    List<String> names = new ArrayList<>();
    if (a.length > 1) names.addAll(Arrays.asList(a).subList(1, a.length));
    else if (!dump.isEmpty()) {
      try (var files = Files.list(tpcds.resolve("queries"))) {
        files.map(f -> f.getFileName().toString().replace(".sql", "")).sorted().forEach(names::add);
      }
    } else names.addAll(List.of("q1","q5","q14a","q23a","q47","q64","q72","q77","q80","q95"));
    // the CTAS plans, analyzed and not run (what the listener sees of `CREATE TABLE … AS`)
    // (a query whose result has two columns of one name cannot be a table: skipped, as its CTAS fails)
    List<LogicalPlan> plans = new ArrayList<>();
    List<String> skipped = new ArrayList<>();
    for (String q : new ArrayList<>(names)) {
      String sql = Files.readString(tpcds.resolve("queries/" + q + ".sql")).replaceAll("(?m)^\\s*--.*$", "").strip();
      LogicalPlan parsed = spark.sessionState().sqlParser().parsePlan("CREATE TABLE tpcds_out_" + q + " USING parquet AS " + sql);
      try {
        plans.add(spark.sessionState().executePlan(parsed, CommandExecutionMode.SKIP()).analyzed());
      } catch (Exception e) { // AnalysisException, which javac does not see declared
        names.remove(q);
        skipped.add(q);
      }
    }
    if (!skipped.isEmpty()) System.out.println("skipped (their CTAS does not analyze): " + skipped);
    Config cfg = Config$.MODULE$.from(new org.apache.spark.SparkConf());
    String redaction = System.getProperty("steps.redaction", "");
    scala.Option<scala.util.matching.Regex> regex = redaction.isEmpty() ? scala.Option.empty()
        : scala.Option.apply(new scala.util.matching.Regex(java.util.regex.Pattern.compile(redaction), scala.collection.immutable.Nil$.MODULE$.<String>empty()));
    if (!dump.isEmpty()) {
      Files.createDirectories(Path.of(dump));
      Pattern volatileFields = Pattern.compile("\"(eventId|emittedAt|jvmId)\":\"[^\"]*\"");
      for (int i = 0; i < plans.size(); i++) {
        byte[] bytes = seal(plans.get(i), cfg, regex);
        String s = volatileFields.matcher(new String(bytes, StandardCharsets.UTF_8)).replaceAll("\"$1\":\"-\"");
        Files.writeString(Path.of(dump, names.get(i) + ".json"), s);
      }
      System.out.printf(Locale.ROOT, "dumped %d events to %s%n", plans.size(), dump);
      return;
    }
    int rounds = Integer.getInteger("steps.rounds", 6); // -Dsteps.rounds=N: longer runs for a profiler
    for (int round = 0; round < rounds; round++) {
      long tb = 0, ts = 0, tw = 0, tz = 0, bytes = 0, zbytes = 0;
      for (int i = 0; i < 20; i++) for (LogicalPlan p : plans) {
        Pending pd = new Pending("command", p, 1L, true, scala.Option.empty(), scala.Option.empty(), 0L, "app", "n", "u", regex, false, scala.Option.empty());
        long t0 = System.nanoTime();
        Built b = EventBuilder$.MODULE$.build(pd, scala.Option.empty(), cfg);
        long t1 = System.nanoTime();
        // Seal's two steps, timed apart (no event here is above maxEventBytes, so Seal degrades none)
        Scrub$.MODULE$.event(((Event) b).json());
        long t2 = System.nanoTime();
        byte[] out = J$.MODULE$.toBytes(((Event) b).json(), false);
        long t3 = System.nanoTime();
        if (out.length > cfg.maxEventBytes()) throw new IllegalStateException("an event above maxEventBytes: Seal would degrade it");
        byte[] z = com.github.luben.zstd.Zstd.compress(out, 3);
        long t4 = System.nanoTime();
        tb += t1 - t0; ts += t2 - t1; tw += t3 - t2; tz += t4 - t3; bytes += out.length; zbytes += z.length;
      }
      int n = 20 * plans.size();
      System.out.printf(Locale.ROOT, "round %d: build %.3f ms, scrub %.3f ms, bytes %.3f ms, zstd-3 %.3f ms per event; %d bytes avg, %d compressed%n",
          round, tb/1e6/n, ts/1e6/n, tw/1e6/n, tz/1e6/n, bytes/n, zbytes/n);
    }
  }

  static byte[] seal(LogicalPlan p, Config cfg, scala.Option<scala.util.matching.Regex> regex) {
    Pending pd = new Pending("command", p, 1L, true, scala.Option.empty(), scala.Option.empty(), 0L, "app", "n", "u", regex, false, scala.Option.empty());
    Built b = EventBuilder$.MODULE$.build(pd, scala.Option.empty(), cfg);
    return (byte[]) Seal$.MODULE$.apply(((Event) b).json(), cfg.maxEventBytes())._1();
  }
}
