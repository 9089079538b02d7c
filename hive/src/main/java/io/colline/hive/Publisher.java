package io.colline.hive;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;

/**
 * The JVM-wide publisher, as the Spark listener's: a bounded queue drained by one daemon thread
 * ({@code colline-publisher}) that builds each event, redacts it, caps its size, writes it to
 * colline.output.dir (optional) and sends it to Kafka (optional). Hive's threads only offer a
 * snapshot to the queue, which never blocks: when it is full, the event is dropped and counted.
 */
final class Publisher {
  /** An event to build on the publisher thread: the Kafka key and the event itself. */
  interface Pending {
    String key();

    /** The event, redacted with r. */
    JsonObject build(Redact r);

    /** Names the event in the output.dir file name (operation or metastore event). */
    String kind();
  }

  private static final Gson COMPACT = new GsonBuilder().disableHtmlEscaping().serializeNulls().create();
  private static final Gson PRETTY = new GsonBuilder().disableHtmlEscaping().serializeNulls().setPrettyPrinting().create();

  final Config cfg;
  final Metrics metrics = new Metrics();
  final Log log = new Log(30000L);
  final Redact redact;
  private final ArrayBlockingQueue<Pending> queue;
  private final KafkaSink kafka;
  private final AtomicInteger seq = new AtomicInteger();
  private volatile boolean busy;
  private volatile boolean stopped;
  private final Thread worker;
  private final Thread hook;

  Publisher(Config cfg) {
    this.cfg = cfg;
    this.redact = new Redact(cfg);
    this.queue = new ArrayBlockingQueue<>(cfg.queueCapacity);
    this.kafka = cfg.kafkaEnabled() ? new KafkaSink(cfg, metrics, log) : null;
    for (String p : cfg.problems) Log.warnOnce(p);
    worker = new Thread(null, this::loop, "colline-publisher", 16L * 1024 * 1024);
    worker.setDaemon(true);
    worker.start();
    hook = new Thread(() -> shutdown(cfg.shutdownTimeoutMs), "colline-shutdown");
    try {
      Runtime.getRuntime().addShutdownHook(hook);
    } catch (Throwable ignored) {
      // a JVM already shutting down
    }
    Log.info("hive " + Versions.COLLINE + " on Hive " + Versions.hive() + ": kafka="
        + (kafka != null ? cfg.bootstrapServers + " topic " + cfg.topic : "off") + ", output.dir="
        + (cfg.outputDir == null ? "-" : cfg.outputDir) + ", queue=" + cfg.queueCapacity);
  }

  /** Called on Hive's thread: never blocks. */
  void offer(Pending p) {
    if (!stopped && queue.offer(p)) {
      metrics.enqueued.incrementAndGet();
      return;
    }
    metrics.droppedQueueFull.incrementAndGet();
    log.warn("queueFull", "event queue full (capacity " + cfg.queueCapacity + "): dropped an event ("
        + metrics.droppedQueueFull.get() + " dropped so far)", null);
  }

  private void loop() {
    while (!stopped || !queue.isEmpty()) {
      try {
        Pending p = queue.poll(200, TimeUnit.MILLISECONDS);
        if (p == null) continue;
        busy = true;
        try {
          Faults.maybeThrow(cfg, "build");
          publish(p.build(redact), p.key(), p.kind());
        } finally {
          busy = false;
        }
      } catch (InterruptedException e) {
        // keep draining until stopped and empty
      } catch (Throwable t) {
        metrics.internalErrors.incrementAndGet();
        log.warn("process", "failed to build or publish an event", t);
      }
    }
  }

  /** Caps (degraded forms above event.maxBytes), writes and sends one event. */
  void publish(JsonObject event, String key, String kind) {
    byte[] bytes = COMPACT.toJson(event).getBytes(StandardCharsets.UTF_8);
    int level = 0;
    while (bytes.length > cfg.maxEventBytes && level < 2) {
      level++;
      degrade(event, level);
      bytes = COMPACT.toJson(event).getBytes(StandardCharsets.UTF_8);
    }
    if (level > 0) metrics.truncated.incrementAndGet();
    if (bytes.length > cfg.maxEventBytes) {
      metrics.droppedOversize.incrementAndGet();
      log.warn("oversize", "event of " + bytes.length + " bytes is above colline.event.maxBytes (" + cfg.maxEventBytes
          + ") even in its smallest degraded form: dropped", null);
      return;
    }
    metrics.built.incrementAndGet();
    if (cfg.outputDir != null) {
      try {
        Path d = Paths.get(cfg.outputDir);
        Files.createDirectories(d);
        String name = String.format("%04d-%s.json", seq.incrementAndGet(), kind.replaceAll("[^A-Za-z0-9_.-]", "_"));
        Files.write(d.resolve(name), PRETTY.toJson(event).getBytes(StandardCharsets.UTF_8));
      } catch (Exception e) {
        metrics.fileErrors.incrementAndGet();
        log.warn("file", "failed to write an event under " + cfg.outputDir, e);
      }
    }
    if (kafka != null) {
      try {
        kafka.send(key, bytes);
      } catch (RuntimeException e) {
        metrics.sendErrors.incrementAndGet();
        log.warn("send", "failed to publish an event to Kafka topic " + cfg.topic, e);
      }
    }
  }

  /**
   * Level 1 drops the edges' expressions and the query text; level 2 also the edges and vertices:
   * what is left (inputs, outputs with their columns, ddl) is table-level lineage. Flagged
   * markers.truncated.
   */
  static void degrade(JsonObject event, int level) {
    JsonObject markers = event.getAsJsonObject("markers");
    if (markers != null) markers.addProperty("truncated", true);
    JsonObject hive = event.getAsJsonObject("hive");
    if (hive == null) return;
    hive.remove("queryText");
    JsonElement edges = hive.get("edges");
    if (level >= 2) {
      hive.add("edges", new JsonArray());
      hive.add("vertices", new JsonArray());
    } else if (edges != null && edges.isJsonArray()) {
      for (JsonElement e : edges.getAsJsonArray()) if (e.isJsonObject()) e.getAsJsonObject().remove("expression");
    }
  }

  private long pending() {
    return queue.size() + (busy ? 1 : 0) + (kafka != null ? kafka.inFlight.get() : 0);
  }

  /**
   * Waits until everything pending is written and acknowledged, at most timeoutMs, and gives up
   * early when records handed to Kafka go unacknowledged for shutdown.stallMs (Kafka down).
   * Building an event or connecting a new producer is not a stall (a first connection on a busy
   * host takes seconds; a failed one marks Kafka down, which ends the wait).
   */
  void awaitIdle(long timeoutMs) {
    long deadline = System.currentTimeMillis() + timeoutMs;
    long last = pending();
    long lastProgress = System.currentTimeMillis();
    try {
      while (last > 0 && worker.isAlive() && System.currentTimeMillis() < deadline
          && System.currentTimeMillis() - lastProgress < cfg.drainStallMs && !(kafka != null && kafka.down())) {
        Thread.sleep(5);
        long now = pending();
        if (now < last || kafka == null || kafka.inFlight.get() == 0) lastProgress = System.currentTimeMillis();
        last = now;
      }
      boolean stalled = last > 0;
      if (stalled) {
        log.warn("drain", last + " event(s) still pending after waiting (Kafka slow or down): giving up", null);
        if (kafka != null) kafka.markDown();
      }
      if (kafka != null) kafka.close(stalled ? 0L : Math.max(0L, Math.min(1000L, deadline - System.currentTimeMillis())));
      long settle = System.currentTimeMillis() + 1000L;
      while (stalled && pending() > 0 && worker.isAlive() && System.currentTimeMillis() < settle) Thread.sleep(5);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Drain (bounded), stop the worker, close the producer; logs the counters. */
  void shutdown(long timeoutMs) {
    try {
      if (!stopped) {
        awaitIdle(timeoutMs);
        stopped = true;
        Log.info("drained: " + metrics.snapshot());
      }
    } catch (Throwable ignored) {
      // never fails the JVM's shutdown
    }
  }

  void removeShutdownHook() {
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (Throwable ignored) {
      // shutting down already
    }
  }
}
