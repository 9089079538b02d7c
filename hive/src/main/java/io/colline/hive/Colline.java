package io.colline.hive;

import java.util.Collections;
import java.util.Map;

/** The single publisher of this JVM, shared by the hook and the metastore listener; re-created only when the settings change. */
public final class Colline {
  private static volatile Publisher current;

  private Colline() {
  }

  static synchronized Publisher publisher(Config cfg) {
    Publisher p = current;
    if (p == null || !p.cfg.equals(cfg)) {
      if (p != null) {
        p.shutdown(cfg.shutdownTimeoutMs);
        p.removeShutdownHook();
      }
      p = new Publisher(cfg);
      current = p;
    }
    return p;
  }

  /** The counters (seen, enqueued, dropped by reason, published, send errors, ...); empty before the first event. */
  public static Map<String, Long> stats() {
    Publisher p = current;
    return p == null ? Collections.emptyMap() : p.metrics.snapshot();
  }

  /** Waits (bounded by colline.shutdown.timeoutMs) until everything queued is sent: for tests and tools. */
  public static void drain() {
    Publisher p = current;
    if (p != null) p.awaitIdle(p.cfg.shutdownTimeoutMs);
  }
}
