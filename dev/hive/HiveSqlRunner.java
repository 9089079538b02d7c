// Runs HiveQL files in an in-process Hive 4.0.1 (Driver, local MapReduce) against an in-process
// Hive metastore served over Thrift (embedded Derby), with colline's hook and metastore listener
// registered when their jar is on the classpath.
//
//   java <java17 flags> -cp 'colline-hive.jar:.cache/jars/hive-4.0.1/*' dev/hive/HiveSqlRunner.java WORKDIR [FILE.hql...]
//
// Use dev/hive-sql, which fetches the jars, builds the hook and passes the flags.
// Statements end with ';' at the end of a line; full-line '--' comments are skipped. Every
// statement runs in a new Driver of one session, as HiveServer2 runs them. One line is printed per
// statement. System properties hive.*, metastore.*, colline.*, mapreduce.* and datanucleus.* go
// to the session's HiveConf and to the metastore's configuration; -Drunner.metastorePort=N picks
// the Thrift port (default: a free one); -Drunner.continueOnError=true keeps going after a failed
// statement (the exit code is still 1).
//
// -Drunner.serve=true: after the files, prints "HIVE_READY thrift://127.0.0.1:<port>" and reads
// HiveQL file names from stdin, one a line, running each and answering "HIVE_DONE <file> ok" or
// "HIVE_DONE <file> failed", then colline's counters ({seen=…, published=…}); the metastore stays
// up for other engines (Spark) until stdin closes.
// -Drunner.splitCapture=true (with colline.output.dir) moves the events of each file into
// <output.dir>/<file name without extension>/ once the file has run (dev/hive/capture).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Method;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.HiveMetaStore;
import org.apache.hadoop.hive.metastore.security.HadoopThriftAuthBridge;
import org.apache.hadoop.hive.ql.processors.CommandProcessor;
import org.apache.hadoop.hive.ql.processors.CommandProcessorFactory;
import org.apache.hadoop.hive.ql.IDriver;
import org.apache.hadoop.hive.ql.session.SessionState;

public class HiveSqlRunner {
  private static final String HOOK = "io.colline.hive.CollineHook";
  private static final String LINEAGE_LOGGER = "org.apache.hadoop.hive.ql.hooks.LineageLogger";
  private static final String LISTENER = "io.colline.hive.CollineMetastoreListener";

  public static void main(String[] args) throws Exception {
    if (args.length < 1) {
      System.err.println("usage: HiveSqlRunner WORKDIR [FILE.hql...]");
      System.exit(2);
    }
    long t0 = System.nanoTime();
    Path work = Path.of(args[0]).toAbsolutePath();
    Files.createDirectories(work);
    System.setProperty("runner.work", work.toString()); // ${system:runner.work} in HiveQL
    System.setProperty("derby.system.home", work.resolve("derby").toString());
    System.setProperty("derby.stream.error.file", work.resolve("derby.log").toString());
    boolean colline = classPresent(HOOK);

    // 1. The metastore, on Thrift, in this JVM.
    int port = Integer.getInteger("runner.metastorePort", 0);
    if (port == 0) {
      try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
        port = s.getLocalPort();
      }
    }
    Configuration ms = new Configuration();
    settings(ms, work);
    ms.set("javax.jdo.option.ConnectionURL", "jdbc:derby:;databaseName=" + work.resolve("metastore_db") + ";create=true");
    ms.set("metastore.schema.verification", "false");
    ms.set("datanucleus.schema.autoCreateAll", "true");
    // the metastore's direct SQL reads tables (PART_COL_STATS, ...) that DataNucleus creates only
    // when JDO first needs them: JDO only, so that every table exists when it is used
    ms.set("metastore.try.direct.sql", "false");
    ms.set("metastore.try.direct.sql.ddl", "false");
    ms.set("metastore.thrift.bind.host", "127.0.0.1");
    if (colline && ms.get("metastore.event.listeners") == null) ms.set("metastore.event.listeners", LISTENER);
    final int msPort = port;
    Thread metastore = new Thread(() -> {
      try {
        HiveMetaStore.startMetaStore(msPort, HadoopThriftAuthBridge.getBridge(), ms);
      } catch (Throwable t) {
        System.err.println("metastore failed: " + t);
        t.printStackTrace();
        System.exit(1);
      }
    }, "metastore");
    metastore.setDaemon(true);
    metastore.start();
    waitForPort(port, 300_000);
    double msS = (System.nanoTime() - t0) / 1e9;

    // 2. The session: Hive's client of that metastore, local MapReduce, the hook.
    HiveConf conf = new HiveConf();
    settings(conf, work);
    conf.set("hive.metastore.uris", "thrift://127.0.0.1:" + port);
    conf.set("hive.execution.engine", "mr");
    conf.set("mapreduce.framework.name", "local");
    // no child JVM for local tasks (map joins): the child would not get the JDK 17 flags
    conf.set("hive.exec.submit.local.task.via.child", "false");
    conf.set("hive.exec.scratchdir", work.resolve("scratch").toString());
    conf.set("hive.exec.local.scratchdir", work.resolve("local").toString());
    conf.set("hive.querylog.location", work.resolve("querylog").toString());
    if (colline) {
      // LineageLogger too, as docs/hive.md says: Hive 4.0 computes a view's lineage for it only
      if (conf.get("hive.exec.post.hooks", "").isEmpty()) conf.set("hive.exec.post.hooks", HOOK + "," + LINEAGE_LOGGER);
      if (conf.get("hive.exec.failure.hooks", "").isEmpty()) conf.set("hive.exec.failure.hooks", HOOK);
      conf.set("hive.lineage.hook.info.enabled", "true");
    }
    SessionState.start(new SessionState(conf));
    System.out.printf(Locale.ROOT, "hive %s ready in %.1fs (metastore thrift://127.0.0.1:%d in %.1fs, colline %s)%n",
        org.apache.hive.common.util.HiveVersionInfo.getVersion(), (System.nanoTime() - t0) / 1e9, port, msS,
        colline ? "hook and metastore listener" : "not on the classpath");

    boolean continueOnError = Boolean.getBoolean("runner.continueOnError");
    Path capture = Boolean.getBoolean("runner.splitCapture") && conf.get("colline.output.dir") != null
        ? Path.of(conf.get("colline.output.dir")) : null;
    int failures = 0;
    for (int f = 1; f < args.length; f++) {
      int n = runFile(conf, Path.of(args[f]), continueOnError, capture);
      failures += n;
      if (n > 0 && !continueOnError) break;
    }
    if (Boolean.getBoolean("runner.serve") && (failures == 0 || continueOnError)) {
      System.out.println("HIVE_READY thrift://127.0.0.1:" + port);
      System.out.flush();
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      for (String line; (line = in.readLine()) != null; ) {
        if (line.trim().isEmpty()) continue;
        int n = runFile(conf, Path.of(line.trim()), continueOnError, capture);
        failures += n;
        drain(); // the counters below count every event of the file: sent, or lost and counted
        System.out.println("HIVE_DONE " + line.trim() + (n == 0 ? " ok" : " failed") + (colline ? " " + stats() : ""));
        System.out.flush();
      }
    }
    drain(); // every event of this run is sent before the JVM exits
    System.out.printf(Locale.ROOT, "hive done in %.1fs, %d failed statement(s)%s%n", (System.nanoTime() - t0) / 1e9, failures,
        colline ? ", colline " + stats() : "");
    System.out.flush();
    System.exit(failures == 0 ? 0 : 1);
  }

  /** Runs the statements of one file; returns how many failed. */
  private static int runFile(HiveConf conf, Path file, boolean continueOnError, Path capture) throws Exception {
    int failures = 0;
    for (String stmt : split(Files.readString(file, StandardCharsets.UTF_8))) {
      long s0 = System.nanoTime();
      String head = oneLine(stmt);
      try {
        String[] tokens = stmt.trim().split("\\s+");
        CommandProcessor proc = CommandProcessorFactory.get(tokens, conf);
        List<String> rows = new ArrayList<>();
        if (proc instanceof IDriver) {
          IDriver d = (IDriver) proc;
          try {
            d.run(stmt);
            d.getResults(rows);
          } finally {
            d.close();
          }
        } else {
          proc.run(stmt.trim().substring(tokens[0].length()).trim());
        }
        System.out.printf(Locale.ROOT, "[%6.2fs] %-60s -> ok%s%n", (System.nanoTime() - s0) / 1e9, head,
            rows.isEmpty() ? "" : " " + rows.size() + " row(s) " + String.join(" | ", rows.subList(0, Math.min(3, rows.size()))));
      } catch (Exception e) {
        failures++;
        String msg = String.valueOf(e.getMessage()).split("\n", 2)[0];
        System.out.printf(Locale.ROOT, "[%6.2fs] %-60s -> FAILED %s: %s%n", (System.nanoTime() - s0) / 1e9, head,
            e.getClass().getSimpleName(), msg);
        if (!continueOnError) break;
      }
    }
    System.out.flush();
    if (capture != null) {
      drain();
      String name = file.getFileName().toString().replaceFirst("\\.[^.]*$", "");
      Path dir = capture.resolve(name);
      Files.createDirectories(dir);
      try (var ls = Files.list(capture)) {
        for (Path p : (Iterable<Path>) ls::iterator) {
          if (Files.isRegularFile(p) && p.toString().endsWith(".json")) Files.move(p, dir.resolve(p.getFileName()), StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
    return failures;
  }

  /** hive.*, metastore.*, colline.*, mapreduce.*, datanucleus.* system properties, plus the warehouse. */
  private static void settings(Configuration c, Path work) {
    c.set("metastore.warehouse.dir", work.resolve("warehouse").toUri().toString());
    c.set("hive.metastore.warehouse.dir", work.resolve("warehouse").toUri().toString());
    for (Map.Entry<Object, Object> e : System.getProperties().entrySet()) {
      String k = String.valueOf(e.getKey());
      if (k.startsWith("hive.") || k.startsWith("metastore.") || k.startsWith("colline.") || k.startsWith("mapreduce.")
          || k.startsWith("datanucleus.")) {
        c.set(k, String.valueOf(e.getValue()));
      }
    }
  }

  private static void waitForPort(int port, long timeoutMs) throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (System.currentTimeMillis() < deadline) {
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", port), 500);
        return;
      } catch (Exception e) {
        Thread.sleep(200);
      }
    }
    throw new IllegalStateException("the metastore did not listen on port " + port + " within " + timeoutMs + " ms");
  }

  private static boolean classPresent(String name) {
    try {
      Class.forName(name);
      return true;
    } catch (Throwable t) {
      return false;
    }
  }

  private static void drain() {
    try {
      Method m = Class.forName("io.colline.hive.Colline").getMethod("drain");
      m.invoke(null);
    } catch (Throwable ignored) {
      // colline not on the classpath
    }
  }

  private static String stats() {
    try {
      return String.valueOf(Class.forName("io.colline.hive.Colline").getMethod("stats").invoke(null));
    } catch (Throwable t) {
      return "-";
    }
  }

  /** Statements end with ';' at the end of a line; full-line '--' comments are skipped. */
  static List<String> split(String text) {
    List<String> out = new ArrayList<>();
    StringBuilder cur = new StringBuilder();
    for (String line : text.split("\n", -1)) {
      String t = line.trim();
      if (t.startsWith("--") || (t.isEmpty() && cur.length() == 0)) continue;
      cur.append(line).append('\n');
      if (t.endsWith(";")) {
        String s = cur.toString().trim();
        s = s.substring(0, s.length() - 1).trim();
        if (!s.isEmpty()) out.add(s);
        cur.setLength(0);
      }
    }
    if (!cur.toString().trim().isEmpty()) out.add(cur.toString().trim());
    return out;
  }

  private static String oneLine(String s) {
    String o = s.replaceAll("\\s+", " ");
    return o.length() > 60 ? o.substring(0, 57) + "..." : o;
  }
}
