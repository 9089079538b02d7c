// A DataFrame program for e2e/safety_test.go: phase 1 writes, then waits (bounded) until the test
// says go (after it stopped the Kafka broker, for the mid-job case), then phase 2 writes, timed.
// -Dphases.dir=DIR: where phase1.done is written and go is awaited.
// -Dphases.awaitPublished=true: before phase1.done, wait until the listener published phase 1.
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.apache.spark.sql.SparkSession;

public class Phases {
  static final int WRITES = 4;

  public static void run(SparkSession spark) throws Exception {
    Path dir = Path.of(System.getProperty("phases.dir"));
    for (int i = 0; i < WRITES; i++) spark.sql("CREATE TABLE p1_" + i + " (id BIGINT, v STRING) USING parquet");
    for (int i = 0; i < WRITES; i++) spark.sql("CREATE TABLE p2_" + i + " (id BIGINT, v STRING) USING parquet");

    long t0 = System.nanoTime();
    for (int i = 0; i < WRITES; i++) spark.sql("INSERT INTO p1_" + i + " SELECT id, CAST(id AS STRING) FROM range(100)");
    System.out.printf("PHASE1_MS=%d%n", (System.nanoTime() - t0) / 1_000_000);
    if (Boolean.getBoolean("phases.awaitPublished")) {
      long deadline = System.currentTimeMillis() + 60_000;
      while (published() < WRITES && System.currentTimeMillis() < deadline) Thread.sleep(50);
      System.out.println("PHASE1_PUBLISHED=" + published());
    }
    Files.writeString(dir.resolve("phase1.done"), "");
    long deadline = System.currentTimeMillis() + 180_000;
    while (!Files.exists(dir.resolve("go")) && System.currentTimeMillis() < deadline) Thread.sleep(20);

    t0 = System.nanoTime();
    for (int i = 0; i < WRITES; i++) spark.sql("INSERT INTO p2_" + i + " SELECT id, CAST(id AS STRING) FROM range(100)");
    long n = spark.sql("SELECT count(*) FROM p2_0").collectAsList().get(0).getLong(0);
    if (n != 100) throw new IllegalStateException("p2_0 has " + n + " rows");
    System.out.printf("PHASE2_MS=%d%n", (System.nanoTime() - t0) / 1_000_000);
  }

  @SuppressWarnings("unchecked")
  static long published() {
    try {
      Map<String, Long> m = (Map<String, Long>) Class.forName("io.colline.listener.CollineListener").getMethod("stats").invoke(null);
      Long v = m.get("published");
      return v == null ? 0 : v;
    } catch (Throwable t) {
      return -1;
    }
  }
}
