package io.colline.hive;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The publishers of this JVM, one per distinct colline.* settings (the hook reads the session's
 * HiveConf, which SET can change; the metastore listener reads the metastore's): shared by the
 * hook and the metastore listener. A publisher is never shut down on a query's thread: the oldest
 * of more than MAX is retired on a thread of its own.
 */
public final class Colline {
  private static final int MAX = 8;
  private static final LinkedHashMap<Config, Publisher> PUBLISHERS = new LinkedHashMap<>(16, 0.75f, true);

  private Colline() {
  }

  static Publisher publisher(Config cfg) {
    Publisher retired = null;
    Publisher p;
    synchronized (PUBLISHERS) {
      p = PUBLISHERS.get(cfg);
      if (p == null) {
        p = new Publisher(cfg);
        PUBLISHERS.put(cfg, p);
        if (PUBLISHERS.size() > MAX) {
          Iterator<Publisher> it = PUBLISHERS.values().iterator();
          retired = it.next();
          it.remove();
        }
      }
    }
    if (retired != null) {
      Publisher r = retired;
      Thread t = new Thread(() -> {
        r.shutdown(r.cfg.shutdownTimeoutMs);
        r.removeShutdownHook();
      }, "colline-retire");
      t.setDaemon(true);
      t.start();
    }
    return p;
  }

  private static List<Publisher> all() {
    synchronized (PUBLISHERS) {
      return new ArrayList<>(PUBLISHERS.values());
    }
  }

  /** The counters (seen, enqueued, dropped by reason, published, send errors, ...), summed over the publishers. */
  public static Map<String, Long> stats() {
    Map<String, Long> sum = new LinkedHashMap<>();
    for (Publisher p : all()) {
      for (Map.Entry<String, Long> e : p.metrics.snapshot().entrySet()) sum.merge(e.getKey(), e.getValue(), Long::sum);
    }
    return sum.isEmpty() ? new Metrics().snapshot() : sum;
  }

  /** Waits (bounded by colline.shutdown.timeoutMs) until everything queued is sent: for tests and tools. */
  public static void drain() {
    for (Publisher p : all()) p.awaitIdle(p.cfg.shutdownTimeoutMs);
  }
}
