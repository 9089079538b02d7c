package io.colline.hive;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/** Counters of the hook and the metastore listener, readable through {@link Colline#stats()}. */
final class Metrics {
  final AtomicLong seen = new AtomicLong();
  final AtomicLong enqueued = new AtomicLong();
  final AtomicLong droppedQueueFull = new AtomicLong();
  final AtomicLong droppedNoLineage = new AtomicLong();
  final AtomicLong droppedOversize = new AtomicLong();
  final AtomicLong droppedKafkaDown = new AtomicLong();
  final AtomicLong truncated = new AtomicLong();
  final AtomicLong built = new AtomicLong();
  final AtomicLong published = new AtomicLong();
  final AtomicLong sendErrors = new AtomicLong();
  final AtomicLong fileErrors = new AtomicLong();
  final AtomicLong internalErrors = new AtomicLong();

  Map<String, Long> snapshot() {
    Map<String, Long> m = new LinkedHashMap<>();
    m.put("seen", seen.get());
    m.put("enqueued", enqueued.get());
    m.put("droppedQueueFull", droppedQueueFull.get());
    m.put("droppedNoLineage", droppedNoLineage.get());
    m.put("droppedOversize", droppedOversize.get());
    m.put("droppedKafkaDown", droppedKafkaDown.get());
    m.put("truncated", truncated.get());
    m.put("built", built.get());
    m.put("published", published.get());
    m.put("sendErrors", sendErrors.get());
    m.put("fileErrors", fileErrors.get());
    m.put("internalErrors", internalErrors.get());
    return m;
  }
}
