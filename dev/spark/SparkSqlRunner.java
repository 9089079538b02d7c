// Runs SQL files on a local Spark session with the colline listener registered.
//
//   java <java17 flags> -cp 'listener.jar:.cache/jars/spark-3.5_2.12/*' dev/spark/SparkSqlRunner.java WORKDIR FILE.sql...
//
// Use dev/spark-sql, which fetches the jars, builds the listener and passes the flags.
// Statements end with ';' at the end of a line; full-line '--' comments are skipped. SELECT/WITH/
// VALUES/SHOW/DESCRIBE/EXPLAIN results are collected. One line is printed per statement.
// colline settings come from -Dspark.colline.*=... system properties or from the environment:
//   COLLINE_ENABLED, COLLINE_KAFKA_BOOTSTRAP, COLLINE_KAFKA_TOPIC, COLLINE_CAPTURE_DIR,
//   COLLINE_NAMESPACE, COLLINE_QUEUE_CAPACITY.
// -Drunner.continueOnError=true keeps going after a failed statement (the exit code is still 1).
// -Drunner.collect=false runs queries without collecting their rows (Spark 2.4 on JDK 17, whose
// collecting actions fail: dev/spark/lines flag nocollect).
//
// A FILE ending in .java is a DataFrame program (for what SQL cannot express): a class named
// after the file, on the classpath (dev/spark-sql compiles it), with
// `public static void run(SparkSession spark)`. It runs in the same session as the SQL files.
//
// -Drunner.splitCapture=true (with COLLINE_CAPTURE_DIR) moves the events of each FILE into
// CAPTURE_DIR/<file name without extension>/NNNN-<root class>.json once the file has run, so that
// one Spark session captures many scenarios (dev/capture). Between files the runner waits until
// Spark's listener bus and the listener's queue are empty, so no event lands in the wrong file.
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

public class SparkSqlRunner {
  private static final String LISTENER = "io.colline.listener.CollineListener";

  public static void main(String[] args) throws Exception {
    if (args.length < 2) {
      System.err.println("usage: SparkSqlRunner WORKDIR FILE.sql...");
      System.exit(2);
    }
    long t0 = System.nanoTime();
    Path work = Path.of(args[0]).toAbsolutePath();
    Files.createDirectories(work);
    System.setProperty("derby.system.home", work.resolve("derby").toString());
    System.setProperty("derby.stream.error.file", work.resolve("derby.log").toString());

    SparkSession.Builder b = SparkSession.builder()
        .master(System.getProperty("spark.master", "local[2]"))
        .appName(System.getProperty("spark.app.name", "colline-spark-sql"))
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.sql.warehouse.dir", work.resolve("warehouse").toUri().toString())
        .config("spark.sql.queryExecutionListeners", LISTENER);

    boolean hive = classPresent("org.apache.hadoop.hive.conf.HiveConf")
        && classPresent("org.apache.spark.sql.hive.HiveSessionStateBuilder")
        && !"false".equals(System.getProperty("runner.hive"));
    if (hive) {
      b.config("spark.sql.catalogImplementation", "hive")
          .config("spark.hadoop.javax.jdo.option.ConnectionURL",
              "jdbc:derby:;databaseName=" + work.resolve("metastore_db") + ";create=true")
          .config("spark.hadoop.hive.metastore.warehouse.dir", work.resolve("warehouse").toUri().toString())
          .config("spark.hadoop.hive.exec.scratchdir", work.resolve("hive-scratch").toString())
          .config("spark.hadoop.hive.exec.local.scratchdir", work.resolve("hive-local").toString())
          .config("spark.hadoop.hive.metastore.schema.verification", "false")
          .config("spark.hadoop.datanucleus.schema.autoCreateAll", "true");
    } else {
      b.config("spark.sql.catalogImplementation", "in-memory");
    }
    Map<String, String> colline = collineSettings();
    colline.forEach(b::config);

    boolean continueOnError = Boolean.getBoolean("runner.continueOnError");
    Path capture = colline.containsKey("spark.colline.output.dir") && Boolean.getBoolean("runner.splitCapture")
        ? Path.of(colline.get("spark.colline.output.dir")) : null;
    SparkSession spark = b.getOrCreate();
    double startS = (System.nanoTime() - t0) / 1e9;
    System.out.printf(Locale.ROOT, "spark %s ready in %.1fs (%s catalog, colline %s)%n", spark.version(), startS,
        hive ? "hive" : "in-memory", colline.isEmpty() ? "defaults" : colline.toString());

    int failures = 0, n = 0;
    outer:
    for (int f = 1; f < args.length; f++) {
      Path file = Path.of(args[f]);
      List<String> stmts = file.toString().endsWith(".java")
          ? List.of("PROGRAM " + baseName(file)) : split(Files.readString(file, StandardCharsets.UTF_8));
      for (String stmt : stmts) {
        n++;
        long s0 = System.nanoTime();
        String head = oneLine(stmt);
        try {
          String what = "ok";
          if (stmt.startsWith("PROGRAM ")) {
            runProgram(spark, baseName(file));
          } else {
            var df = spark.sql(stmt); // commands run eagerly
            String kw = firstWord(stmt);
            if (!"false".equals(System.getProperty("runner.collect")) && (kw.equals("SELECT") || kw.equals("WITH") || kw.equals("VALUES") || kw.equals("TABLE")
                || kw.equals("SHOW") || kw.equals("DESCRIBE") || kw.equals("DESC") || kw.equals("EXPLAIN")
                || kw.equals("FROM"))) {
              List<Row> rows = df.collectAsList();
              what = rows.size() + " row(s)" + (rows.isEmpty() ? "" : " " + preview(rows));
            }
          }
          System.out.printf(Locale.ROOT, "[%3d %6.2fs] %-60s -> %s%n", n, (System.nanoTime() - s0) / 1e9, head, what);
        } catch (Exception e) {
          failures++;
          Throwable c = e instanceof java.lang.reflect.InvocationTargetException && e.getCause() != null ? e.getCause() : e;
          String msg = String.valueOf(c.getMessage()).split("\n", 2)[0];
          System.out.printf(Locale.ROOT, "[%3d %6.2fs] %-60s -> FAILED %s: %s%n", n, (System.nanoTime() - s0) / 1e9,
              head, c.getClass().getSimpleName(), msg);
          if (!continueOnError) break outer;
        }
      }
      if (capture != null) {
        int moved = splitCapture(spark, capture, baseName(file));
        System.out.printf(Locale.ROOT, "      %s: %d event(s)%n", baseName(file), moved);
      }
    }
    spark.stop(); // drains the listener bus; the listener drains its queue on application end
    System.out.printf(Locale.ROOT, "done: %d statement(s), %d failed, %.1fs; colline %s%n", n, failures,
        (System.nanoTime() - t0) / 1e9, listenerStats());
    System.exit(failures == 0 ? 0 : 1);
  }

  /** Runs the DataFrame program class `name`: `public static void run(SparkSession spark)`. */
  static void runProgram(SparkSession spark, String name) throws Exception {
    Class<?> c = Class.forName(name, true, Thread.currentThread().getContextClassLoader());
    c.getMethod("run", SparkSession.class).invoke(null, spark);
  }

  /**
   * Moves the events written so far into capture/scenario/, numbered in order. Events reach the
   * listener asynchronously (Spark's listener bus, then the listener's own queue): wait for both.
   */
  static int splitCapture(SparkSession spark, Path capture, String scenario) throws Exception {
    spark.sparkContext().listenerBus().waitUntilEmpty(60_000L);
    Class.forName(LISTENER).getMethod("flush", long.class).invoke(null, 60_000L);
    Path dir = capture.resolve(scenario);
    if (Files.isDirectory(dir)) {
      try (var old = Files.list(dir)) {
        for (Path p : (Iterable<Path>) old::iterator) Files.delete(p);
      }
    }
    List<Path> events = new ArrayList<>();
    if (Files.isDirectory(capture)) {
      try (var all = Files.list(capture)) {
        all.filter(p -> Files.isRegularFile(p) && p.toString().endsWith(".json")).sorted().forEach(events::add);
      }
    }
    if (events.isEmpty()) return 0;
    Files.createDirectories(dir);
    int k = 0;
    for (Path p : events) {
      // <seq>-<executionId>-<RootClass>.json -> NNNN-<RootClass>.json: execution ids shift whenever
      // an earlier scenario changes; names that do not would churn the corpus for nothing
      String[] parts = p.getFileName().toString().split("-", 3);
      String rest = parts.length == 3 ? parts[2] : p.getFileName().toString();
      Files.move(p, dir.resolve(String.format(Locale.ROOT, "%04d-%s", ++k, rest)), StandardCopyOption.REPLACE_EXISTING);
    }
    return k;
  }

  static String baseName(Path file) {
    String s = file.getFileName().toString();
    int dot = s.lastIndexOf('.');
    return dot > 0 ? s.substring(0, dot) : s;
  }

  /** spark.colline.* from system properties, then the COLLINE_* environment variables. */
  static Map<String, String> collineSettings() {
    Map<String, String> m = new LinkedHashMap<>();
    String[][] env = {
        {"COLLINE_ENABLED", "spark.colline.enabled"},
        {"COLLINE_KAFKA_BOOTSTRAP", "spark.colline.kafka.bootstrapServers"},
        {"COLLINE_KAFKA_TOPIC", "spark.colline.kafka.topic"},
        {"COLLINE_CAPTURE_DIR", "spark.colline.output.dir"},
        {"COLLINE_NAMESPACE", "spark.colline.namespace"},
        {"COLLINE_QUEUE_CAPACITY", "spark.colline.queue.capacity"},
    };
    for (String[] e : env) {
      String v = System.getenv(e[0]);
      if (v != null && !v.isBlank()) m.put(e[1], v);
    }
    for (String k : System.getProperties().stringPropertyNames()) {
      if (k.startsWith("spark.colline.")) m.put(k, System.getProperty(k));
    }
    if (m.containsKey("spark.colline.output.dir")) {
      m.put("spark.colline.output.dir", Path.of(m.get("spark.colline.output.dir")).toAbsolutePath().toString());
    }
    return m;
  }

  /** Statements end with ';' at the end of a line; full-line comments are dropped. */
  static List<String> split(String text) {
    List<String> out = new ArrayList<>();
    StringBuilder cur = new StringBuilder();
    for (String line : text.split("\r?\n", -1)) {
      String t = line.strip();
      if (t.startsWith("--") || (t.isEmpty() && cur.length() == 0)) continue;
      if (t.endsWith(";")) {
        cur.append(line, 0, line.lastIndexOf(';'));
        String s = cur.toString().strip();
        if (!s.isEmpty()) out.add(s);
        cur.setLength(0);
      } else {
        cur.append(line).append('\n');
      }
    }
    String s = cur.toString().strip();
    if (!s.isEmpty()) out.add(s);
    return out;
  }

  static String firstWord(String s) {
    String t = s.stripLeading().replaceAll("^\\(+", "");
    int i = 0;
    while (i < t.length() && Character.isLetter(t.charAt(i))) i++;
    return t.substring(0, i).toUpperCase(Locale.ROOT);
  }

  static String oneLine(String s) {
    String t = s.replaceAll("\\s+", " ").strip();
    return t.length() <= 60 ? t : t.substring(0, 57) + "...";
  }

  static String preview(List<Row> rows) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < Math.min(3, rows.size()); i++) {
      if (i > 0) sb.append(' ');
      sb.append(rows.get(i).toString());
    }
    if (rows.size() > 3) sb.append(" ...");
    String s = sb.toString();
    return s.length() <= 200 ? s : s.substring(0, 197) + "...";
  }

  static boolean classPresent(String name) {
    try {
      Class.forName(name, false, SparkSqlRunner.class.getClassLoader());
      return true;
    } catch (Throwable t) {
      return false;
    }
  }

  static String listenerStats() {
    try {
      return String.valueOf(Class.forName(LISTENER).getMethod("stats").invoke(null));
    } catch (Throwable t) {
      return "(listener not loaded)";
    }
  }
}
