// Driver overhead of the colline listener, and of OpenLineage on the same workload, in one Spark
// run (issue 4, item 6). Run by bench/overhead/run.sh, which builds the classpath.
//
//   java <java17 flags> -cp 'colline.jar:openlineage-spark.jar:spark-jars/*' bench/overhead/Overhead.java \
//        WORK TPCDS_DIR [kafka-bootstrap|-] [rounds]
//
// Workload: the TPC-DS queries as `CREATE TABLE ... USING parquet AS <query>` over the empty TPC-DS
// schema, plus a small job on real rows (200k generated rows, 6 INSERT ... SELECT with joins and
// aggregates). Modes, each in its own database, in this order per round: none, colline, none,
// openlineage. colline is a QueryExecutionListener registered on its own session; OpenLineage is a
// SparkListener on the SparkContext, added only for its phase (column lineage on, file transport).
//
// What is measured, per query (a query is one CTAS / INSERT):
//   wall      the query's wall time as the caller sees it (listener work is asynchronous, so this
//             mostly shows contention on a 2-core machine);
//   listener  the driver time the listener adds: for colline, the wall time of its callbacks on the
//             listener bus plus the CPU time of its publisher thread and of its Kafka producer's
//             network thread; for OpenLineage, the wall time of all its SparkListener callbacks
//             (its file transport writes synchronously inside them).
// After each query the bench waits until the bus and colline's queue are idle, so each query's
// listener time is its own.
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.spark.SparkConf;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerApplicationEnd;
import org.apache.spark.scheduler.SparkListenerApplicationStart;
import org.apache.spark.scheduler.SparkListenerEvent;
import org.apache.spark.scheduler.SparkListenerJobEnd;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.SparkListenerTaskStart;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.QueryExecution;
import org.apache.spark.sql.util.QueryExecutionListener;

public class Overhead {
  static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  /** Times a QueryExecutionListener's callbacks (they run on the listener-bus thread). */
  static final class TimedQel implements QueryExecutionListener {
    final QueryExecutionListener inner;
    final AtomicLong nanos = new AtomicLong();
    TimedQel(QueryExecutionListener inner) { this.inner = inner; }
    public void onSuccess(String f, QueryExecution qe, long d) {
      long t = System.nanoTime();
      try { inner.onSuccess(f, qe, d); } finally { nanos.addAndGet(System.nanoTime() - t); }
    }
    public void onFailure(String f, QueryExecution qe, Exception e) {
      long t = System.nanoTime();
      try { inner.onFailure(f, qe, e); } finally { nanos.addAndGet(System.nanoTime() - t); }
    }
  }

  /** Times every callback of a SparkListener. */
  static final class TimedListener extends SparkListener {
    final SparkListener inner;
    final AtomicLong nanos = new AtomicLong();
    TimedListener(SparkListener inner) { this.inner = inner; }
    interface Call { void run(); }
    void time(Call c) {
      long t = System.nanoTime();
      try { c.run(); } finally { nanos.addAndGet(System.nanoTime() - t); }
    }
    @Override public void onOtherEvent(SparkListenerEvent e) { time(() -> inner.onOtherEvent(e)); }
    @Override public void onJobStart(SparkListenerJobStart e) { time(() -> inner.onJobStart(e)); }
    @Override public void onJobEnd(SparkListenerJobEnd e) { time(() -> inner.onJobEnd(e)); }
    @Override public void onStageSubmitted(SparkListenerStageSubmitted e) { time(() -> inner.onStageSubmitted(e)); }
    @Override public void onStageCompleted(SparkListenerStageCompleted e) { time(() -> inner.onStageCompleted(e)); }
    @Override public void onTaskStart(SparkListenerTaskStart e) { time(() -> inner.onTaskStart(e)); }
    @Override public void onTaskEnd(SparkListenerTaskEnd e) { time(() -> inner.onTaskEnd(e)); }
    @Override public void onApplicationEnd(SparkListenerApplicationEnd e) { time(() -> inner.onApplicationEnd(e)); }
    @Override public void onApplicationStart(SparkListenerApplicationStart e) { time(() -> inner.onApplicationStart(e)); }
  }

  record Query(String name, String sql) {}

  public static void main(String[] args) throws Exception {
    Path work = Path.of(args[0]).toAbsolutePath();
    Path tpcds = Path.of(args[1]);
    String kafka = args.length > 2 && !args[2].equals("-") ? args[2] : "";
    int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 1;
    Files.createDirectories(work);

    SparkSession spark = SparkSession.builder()
        .master("local[2]").appName("colline-overhead-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2").config("spark.default.parallelism", "2")
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.sql.codegen.wholeStage", "false")
        .config("spark.sql.catalogImplementation", "in-memory")
        .config("spark.sql.warehouse.dir", work.resolve("warehouse").toUri().toString())
        .config("spark.colline.kafka.bootstrapServers", kafka)
        .config("spark.colline.kafka.topic", System.getProperty("bench.topic", "colline.bench.overhead"))
        .config("spark.openlineage.transport.type", "file")
        .config("spark.openlineage.transport.location", work.resolve("openlineage.jsonl").toString())
        .config("spark.openlineage.namespace", "bench")
        .config("spark.openlineage.columnLineage.enabled", "true")
        .getOrCreate();
    SparkConf conf = spark.sparkContext().getConf();

    // schema
    spark.sql("CREATE DATABASE tpcds");
    spark.sql("USE tpcds");
    for (String stmt : Files.readString(tpcds.resolve("ddl.sql")).split(";\\s*\\n")) {
      String s = stmt.replaceAll("(?m)^\\s*--.*$", "").strip();
      if (!s.isEmpty()) spark.sql(s);
    }
    spark.sql("CREATE TABLE sales_rows USING parquet AS SELECT id, id % 1000 AS customer, id % 37 AS store, " +
        "CAST(id % 500 AS DECIMAL(7,2)) AS amount, concat('c', CAST(id % 1000 AS STRING)) AS country FROM range(200000)");
    spark.sql("CREATE TABLE customers_rows USING parquet AS SELECT id AS customer, concat('n', CAST(id AS STRING)) AS name, " +
        "id % 17 AS segment FROM range(1000)");

    List<Query> queries = new ArrayList<>();
    List<String> only = System.getProperty("bench.queries", "").isBlank() ? List.of()
        : Arrays.asList(System.getProperty("bench.queries").trim().split("[ ,]+"));
    try (var files = Files.list(tpcds.resolve("queries"))) {
      files.map(p -> p.getFileName().toString()).filter(n -> n.matches("q\\d+[ab]?\\.sql"))
          .sorted((a, b) -> {
            int c = Integer.compare(Integer.parseInt(a.replaceAll("\\D", "")), Integer.parseInt(b.replaceAll("\\D", "")));
            return c != 0 ? c : a.compareTo(b);
          })
          .forEach(n -> {
            String name = n.replace(".sql", "");
            if (!only.isEmpty() && !only.contains(name)) return;
            try {
              String q = Files.readString(tpcds.resolve("queries").resolve(n)).replaceAll("(?m)^\\s*--.*$", "").strip();
              queries.add(new Query(name, q));
            } catch (Exception e) { throw new RuntimeException(e); }
          });
    }
    String[][] small = {
        {"small_agg", "SELECT country, sum(amount) AS revenue, count(*) AS n FROM tpcds.sales_rows GROUP BY country"},
        {"small_join", "SELECT c.segment, s.store, sum(s.amount) AS revenue FROM tpcds.sales_rows s JOIN tpcds.customers_rows c ON s.customer = c.customer GROUP BY c.segment, s.store"},
        {"small_window", "SELECT customer, amount, rank() OVER (PARTITION BY store ORDER BY amount DESC) AS r FROM tpcds.sales_rows WHERE id % 10 = 0"},
        {"small_filter", "SELECT id, upper(country) AS country, amount * 1.2 AS gross FROM tpcds.sales_rows WHERE amount > 100"},
        {"small_union", "SELECT customer, amount FROM tpcds.sales_rows WHERE store = 1 UNION ALL SELECT customer, amount FROM tpcds.sales_rows WHERE store = 2"},
        {"small_distinct", "SELECT DISTINCT country, store FROM tpcds.sales_rows"},
    };
    for (String[] s : small) queries.add(new Query(s[0], s[1]));

    // sessions and listeners
    SparkSession none = spark.newSession();
    SparkSession withColline = spark.newSession();
    TimedQel colline = new TimedQel((QueryExecutionListener) Class.forName("io.colline.listener.CollineListener")
        .getConstructor(SparkConf.class).newInstance(conf));
    withColline.listenerManager().register(colline);
    TimedListener ol = new TimedListener((SparkListener) Class.forName("io.openlineage.spark.agent.OpenLineageSparkListener")
        .getConstructor(SparkConf.class).newInstance(conf));

    Map<String, List<double[]>> results = new LinkedHashMap<>(); // mode -> [wallMs, listenerMs] per query
    Map<String, Integer> failures = new LinkedHashMap<>();
    long warmStart = System.nanoTime();
    // warm-up: every mode once (JIT of Spark, colline and OpenLineage code paths), not reported
    Map<String, Integer> warmFailures = new LinkedHashMap<>();
    run(spark, none, "warmup", queries, null, null, null, warmFailures);
    run(spark, withColline, "warmupc", queries, colline, null, null, warmFailures);
    spark.sparkContext().addSparkListener(ol);
    run(spark, none, "warmupo", queries, null, ol, null, warmFailures);
    spark.sparkContext().removeSparkListener(ol);
    System.out.printf(Locale.ROOT, "warm-up: %d queries in %.1fs%n", queries.size(), (System.nanoTime() - warmStart) / 1e9);
    for (int r = 0; r < rounds; r++) {
      results.computeIfAbsent("none", k -> new ArrayList<>()).addAll(run(spark, none, "none" + r, queries, null, null, null, failures));
      results.computeIfAbsent("colline", k -> new ArrayList<>()).addAll(run(spark, withColline, "colline" + r, queries, colline, null, null, failures));
      results.computeIfAbsent("none", k -> new ArrayList<>()).addAll(run(spark, none, "noneb" + r, queries, null, null, null, failures));
      spark.sparkContext().addSparkListener(ol);
      results.computeIfAbsent("openlineage", k -> new ArrayList<>()).addAll(run(spark, none, "ol" + r, queries, null, ol, null, failures));
      spark.sparkContext().removeSparkListener(ol);
    }

    Map<String, Long> stats = stats();
    System.out.println("colline stats: " + stats);
    long olEvents = 0, olColumnLineage = 0;
    Path olFile = work.resolve("openlineage.jsonl");
    if (Files.exists(olFile)) {
      for (String line : Files.readAllLines(olFile)) {
        olEvents++;
        if (line.contains("\"columnLineage\"")) olColumnLineage++;
      }
    }
    System.out.printf(Locale.ROOT, "openlineage: %d events written, %d with a columnLineage facet%n", olEvents, olColumnLineage);
    System.out.println("failed queries (per mode run): " + failures);

    double[] noneWall = col(results.get("none"), 0);
    System.out.printf(Locale.ROOT, "%n%-12s %7s %10s %10s %10s %12s %12s %12s%n", "mode", "queries", "wall p50", "wall p99",
        "wall sum", "listener p50", "listener p99", "listener sum");
    for (var e : results.entrySet()) {
      double[] wall = col(e.getValue(), 0), lis = col(e.getValue(), 1);
      System.out.printf(Locale.ROOT, "%-12s %7d %8.1fms %8.1fms %9.1fs %10.3fms %10.3fms %10.1fms%n", e.getKey(), wall.length,
          pct(wall, 50), pct(wall, 99), sum(wall) / 1000, pct(lis, 50), pct(lis, 99), sum(lis));
    }
    long built = stats.getOrDefault("built", 0L);
    double collineSum = sum(col(results.get("colline"), 1));
    double olSum = sum(col(results.get("openlineage"), 1));
    System.out.printf(Locale.ROOT, "%ncolline: %d events built, listener time per event %.3f ms; " +
            "median listener time per query: colline %.3f ms, OpenLineage %.3f ms (ratio %.1fx); total %.1f ms vs %.1f ms (ratio %.1fx)%n",
        built, built == 0 ? 0 : collineSum / built, pct(col(results.get("colline"), 1), 50),
        pct(col(results.get("openlineage"), 1), 50),
        pct(col(results.get("openlineage"), 1), 50) / Math.max(1e-9, pct(col(results.get("colline"), 1), 50)),
        collineSum, olSum, olSum / Math.max(1e-9, collineSum));
    System.out.printf(Locale.ROOT, "wall-time difference of medians vs none: colline %+.1f ms, OpenLineage %+.1f ms%n",
        pct(col(results.get("colline"), 0), 50) - pct(noneWall, 50), pct(col(results.get("openlineage"), 0), 50) - pct(noneWall, 50));
    // one machine-readable line per mode, TPC-DS CTAS only (bench/listener.go reads them):
    // mode, queries, wall p50, wall p99, listener p50, listener p99, listener sum (ms)
    for (var e : results.entrySet()) {
      List<double[]> tpcdsRows = e.getValue().stream().filter(r -> r[2] == 1).toList();
      double[] wall = col(tpcdsRows, 0), lis = col(tpcdsRows, 1);
      System.out.printf(Locale.ROOT, "tpcds-row %s %d %.3f %.3f %.3f %.3f %.3f%n", e.getKey(), wall.length,
          pct(wall, 50), pct(wall, 99), pct(lis, 50), pct(lis, 99), sum(lis));
    }
    List<double[]> collineTpcds = results.getOrDefault("colline", List.of()).stream().filter(r -> r[2] == 1).toList();
    System.out.printf(Locale.ROOT, "colline listener time per TPC-DS CTAS by part, p50 (sum): callbacks on the bus %.3f ms (%.1f ms), " +
            "publisher thread %.3f ms (%.1f ms), Kafka producer threads %.3f ms (%.1f ms)%n",
        pct(col(collineTpcds, 3), 50), sum(col(collineTpcds, 3)), pct(col(collineTpcds, 4), 50), sum(col(collineTpcds, 4)),
        pct(col(collineTpcds, 5), 50), sum(col(collineTpcds, 5)));
    System.out.printf(Locale.ROOT, "colline-stats built=%d droppedNested=%d published=%d%n", built,
        stats.getOrDefault("droppedNested", 0L), stats.getOrDefault("published", 0L));
    spark.stop();
  }

  /** Runs every query once as a write into database `db`; returns [wallMs, listenerMs] per successful query. */
  static List<double[]> run(SparkSession base, SparkSession s, String db, List<Query> queries,
      TimedQel colline, TimedListener ol, Object unused, Map<String, Integer> failures) throws Exception {
    s.sql("CREATE DATABASE IF NOT EXISTS b_" + db);
    s.sql("USE tpcds");
    List<double[]> out = new ArrayList<>();
    for (Query q : queries) {
      idle(base);
      long before = listenerNanos(colline, ol);
      long[] partsBefore = collineParts(colline);
      long t0 = System.nanoTime();
      try {
        s.sql("CREATE TABLE b_" + db + "." + q.name + " USING parquet AS " + q.sql);
      } catch (Exception e) {
        failures.merge(q.name, 1, Integer::sum);
        continue;
      }
      long wall = System.nanoTime() - t0;
      idle(base);
      long lis = listenerNanos(colline, ol) - before;
      long[] partsAfter = collineParts(colline);
      out.add(new double[] {wall / 1e6, lis / 1e6, q.name.startsWith("q") ? 1 : 0,
          (partsAfter[0] - partsBefore[0]) / 1e6, (partsAfter[1] - partsBefore[1]) / 1e6, (partsAfter[2] - partsBefore[2]) / 1e6});
    }
    return out;
  }

  /** colline's listener time so far by part: callbacks (wall), publisher thread (CPU), Kafka producer threads (CPU). */
  static long[] collineParts(TimedQel colline) {
    long[] p = new long[3];
    if (colline == null) return p;
    p[0] = colline.nanos.get();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      String name = t.getName();
      int i = name.equals("colline-publisher") ? 1 : name.contains("colline-listener") ? 2 : -1;
      if (i < 0) continue;
      long c = THREADS.getThreadCpuTime(t.getId());
      if (c > 0) p[i] += c;
    }
    return p;
  }

  /** Listener time so far: callback wall time plus colline's own threads' CPU. */
  static long listenerNanos(TimedQel colline, TimedListener ol) {
    if (ol != null) return ol.nanos.get();
    if (colline == null) return 0;
    long n = colline.nanos.get();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      String name = t.getName();
      if (name.equals("colline-publisher") || name.contains("colline-listener")) {
        long c = THREADS.getThreadCpuTime(t.getId());
        if (c > 0) n += c;
      }
    }
    return n;
  }

  /** Waits until Spark's listener bus and colline's queue are idle. */
  static void idle(SparkSession s) throws Exception {
    s.sparkContext().listenerBus().waitUntilEmpty(60_000L);
    long deadline = System.currentTimeMillis() + 60_000;
    while (System.currentTimeMillis() < deadline) {
      Map<String, Long> st = stats();
      long done = st.getOrDefault("built", 0L) + st.getOrDefault("droppedNoLineage", 0L)
          + st.getOrDefault("droppedNested", 0L) + st.getOrDefault("droppedOversize", 0L)
          + st.getOrDefault("internalErrors", 0L);
      if (done >= st.getOrDefault("enqueued", 0L)) return;
      Thread.sleep(1);
    }
  }

  @SuppressWarnings("unchecked")
  static Map<String, Long> stats() {
    try {
      return (Map<String, Long>) Class.forName("io.colline.listener.CollineListener").getMethod("stats").invoke(null);
    } catch (Throwable t) {
      return Collections.emptyMap();
    }
  }

  static double[] col(List<double[]> rows, int i) {
    if (rows == null) return new double[0];
    return rows.stream().mapToDouble(r -> r[i]).toArray();
  }

  static double pct(double[] v, double p) {
    if (v.length == 0) return Double.NaN;
    double[] s = v.clone();
    Arrays.sort(s);
    int i = (int) Math.ceil(p / 100.0 * s.length) - 1;
    return s[Math.max(0, Math.min(s.length - 1, i))];
  }

  static double sum(double[] v) {
    double t = 0;
    for (double x : v) t += x;
    return t;
  }
}
