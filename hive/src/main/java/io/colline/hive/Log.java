package io.colline.hive;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** WARN lines at most once per interval per key (the suppressed count goes with the next one), or once per JVM. */
final class Log {
  private static final Logger LOG = LoggerFactory.getLogger("io.colline.hive");
  private static final Set<String> SAID = ConcurrentHashMap.newKeySet();
  private final long intervalMs;
  private final ConcurrentHashMap<String, AtomicLong> last = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, AtomicLong> suppressed = new ConcurrentHashMap<>();

  Log(long intervalMs) {
    this.intervalMs = intervalMs;
  }

  void warn(String key, String msg, Throwable t) {
    try {
      long now = System.currentTimeMillis();
      AtomicLong l = last.computeIfAbsent(key, k -> new AtomicLong(0L));
      AtomicLong s = suppressed.computeIfAbsent(key, k -> new AtomicLong(0L));
      long prev = l.get();
      if (now - prev >= intervalMs && l.compareAndSet(prev, now)) {
        long n = s.getAndSet(0L);
        String text = "colline: " + msg + (n > 0 ? " (" + n + " similar messages suppressed)" : "");
        LOG.warn(t == null ? text : text + ": " + t);
      } else {
        s.incrementAndGet();
      }
    } catch (Throwable ignored) {
      // logging never fails a query
    }
  }

  static void info(String msg) {
    try {
      LOG.info("colline: " + msg);
    } catch (Throwable ignored) {
      // logging never fails a query
    }
  }

  /** Once per JVM (a setting problem is seen by every session). */
  static void warnOnce(String msg) {
    try {
      if (SAID.size() < 1000 && SAID.add(msg)) LOG.warn("colline: " + msg);
    } catch (Throwable ignored) {
      // logging never fails a query
    }
  }
}
