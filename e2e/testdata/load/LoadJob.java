// A DataFrame program for e2e/load_test.go (dev/spark-sql, in-memory catalog): the listener under
// load. A Spark job issues many small write queries, in rounds of two phases of the same work:
// "none" on a session without the colline listener, "colline" on a session with it. Each query
// is a write with lineage: `CREATE OR REPLACE VIEW` over a join and an aggregate (analysis only,
// no Spark job), and every fourth a `noop` write of the same query (a Spark job), so the job
// issues thousands of queries a minute.
//
// -Dload.queries=N   queries per phase (default 1500); -Dload.rounds=R (default 2);
// -Dload.threads=T   threads issuing the queries concurrently (default 1).
// It prints one line per phase: LOAD phase=<none|colline> round=<r> queries=<n> ms=<wall>
//   gcMs=<time of the checkpoints' full GCs, inside ms> heapMiB=<live heap after a full GC at 5
//   points, comma-separated> stats=<listener counters delta>
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.spark.sql.SparkSession;

public class LoadJob {
  static final MemoryMXBean MEM = ManagementFactory.getMemoryMXBean();
  static final AtomicLong GC_NANOS = new AtomicLong();

  public static void run(SparkSession spark) throws Exception {
    int queries = Integer.getInteger("load.queries", 1500);
    int rounds = Integer.getInteger("load.rounds", 2);
    int threads = Integer.getInteger("load.threads", 1);
    spark.sql("CREATE DATABASE IF NOT EXISTS load");
    spark.sql("CREATE TABLE load.orders USING parquet AS SELECT id, id % 100 AS customer_id, "
        + "CAST(id % 700 AS DECIMAL(9,2)) AS amount, IF(id % 3 = 0, 'open', 'paid') AS status FROM range(2000)");
    spark.sql("CREATE TABLE load.customers USING parquet AS SELECT id AS customer_id, "
        + "concat('c', CAST(id % 17 AS STRING)) AS country, id % 5 AS segment FROM range(100)");
    SparkSession none = spark.newSession();
    none.listenerManager().clear(); // the same work without the colline listener
    SparkSession colline = spark.newSession();
    for (int r = 1; r <= rounds; r++) {
      phase(none, "none", r, queries, threads);
      phase(colline, "colline", r, queries, threads);
    }
  }

  static void phase(SparkSession s, String name, int round, int queries, int threads) throws Exception {
    Map<String, Long> before = stats();
    GC_NANOS.set(0);
    List<String> heap = new ArrayList<>();
    AtomicInteger next = new AtomicInteger();
    int checkpoint = Math.max(1, queries / 5);
    long t0 = System.nanoTime();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<Future<?>> done = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      done.add(pool.submit(() -> {
        for (int i; (i = next.getAndIncrement()) < queries; ) {
          query(s, name, round, i);
          if (threads == 1 && (i + 1) % checkpoint == 0) heap.add(liveHeapMiB());
        }
        return null;
      }));
    }
    for (Future<?> f : done) f.get();
    pool.shutdown();
    long ms = (System.nanoTime() - t0) / 1_000_000;
    if (threads > 1) heap.add(liveHeapMiB());
    // The listener hears of a query on Spark's listener bus, after the query returns: wait (not
    // timed) until it has seen this phase's queries, so none is counted in the next phase.
    awaitSeen(before, name.equals("colline") ? queries : 0);
    Map<String, Long> after = stats();
    Map<String, Long> delta = new TreeMap<>();
    after.forEach((k, v) -> delta.put(k, v - before.getOrDefault(k, 0L)));
    System.out.printf("LOAD phase=%s round=%d queries=%d ms=%d gcMs=%d heapMiB=%s stats=%s%n",
        name, round, queries, ms, GC_NANOS.get() / 1_000_000, String.join(",", heap), delta);
  }

  static void query(SparkSession s, String phase, int round, int i) {
    String view = String.format("load.v_%s_%d_%d", phase, round, i % 50);
    String sql = "SELECT c.country, c.segment, sum(o.amount) AS revenue, count(*) AS orders "
        + "FROM load.orders o JOIN load.customers c ON o.customer_id = c.customer_id "
        + "WHERE o.status = 'paid' AND o.amount > " + (i % 100) + " GROUP BY c.country, c.segment";
    if (i % 4 == 3) s.sql(sql).write().format("noop").mode("overwrite").save();
    else s.sql("CREATE OR REPLACE VIEW " + view + " AS " + sql);
  }

  /** Waits up to a minute until the listener has seen n executions since before. */
  static void awaitSeen(Map<String, Long> before, int n) throws InterruptedException {
    long deadline = System.nanoTime() + 60_000_000_000L;
    while (stats().getOrDefault("seen", 0L) - before.getOrDefault("seen", 0L) < n && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
  }

  static String liveHeapMiB() {
    long t = System.nanoTime();
    System.gc();
    GC_NANOS.addAndGet(System.nanoTime() - t);
    return String.valueOf(MEM.getHeapMemoryUsage().getUsed() >> 20);
  }

  @SuppressWarnings("unchecked")
  static Map<String, Long> stats() {
    try {
      return new TreeMap<>((Map<String, Long>) Class.forName("io.colline.listener.CollineListener").getMethod("stats").invoke(null));
    } catch (Throwable t) {
      return new TreeMap<>();
    }
  }
}
