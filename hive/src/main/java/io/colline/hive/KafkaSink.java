package io.colline.hive;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Kafka publishing, as the Spark listener's KafkaSink: one lazily created producer, used only by
 * the publisher thread. A new producer first waits for the topic's metadata (twice max.block.ms at
 * most); if that fails, Kafka counts as down for colline.kafka.retryMs and events are dropped at
 * once (droppedKafkaDown) instead of queueing behind a dead broker.
 */
final class KafkaSink {
  private final Config cfg;
  private final Metrics metrics;
  private final Log log;
  private final Object lock = new Object();
  private volatile KafkaProducer<byte[], byte[]> producer;
  private volatile long downUntil;
  private volatile boolean topicKnown;
  /** records handed to the producer and not yet acknowledged or failed */
  final AtomicLong inFlight = new AtomicLong();

  KafkaSink(Config cfg, Metrics metrics, Log log) {
    this.cfg = cfg;
    this.metrics = metrics;
    this.log = log;
  }

  boolean down() {
    return System.currentTimeMillis() < downUntil;
  }

  void markDown() {
    downUntil = System.currentTimeMillis() + cfg.kafkaRetryMs;
    topicKnown = false;
  }

  private KafkaProducer<byte[], byte[]> create() {
    Properties props = new Properties();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cfg.bootstrapServers);
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    props.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "zstd");
    props.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, String.valueOf(16 * 1024 * 1024));
    props.put(ProducerConfig.BUFFER_MEMORY_CONFIG, String.valueOf(64L * 1024 * 1024));
    props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "10000");
    props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
    props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "30000");
    props.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "5000");
    props.put(ProducerConfig.LINGER_MS_CONFIG, "20");
    props.put(ProducerConfig.CLIENT_ID_CONFIG, "colline-hive");
    for (Map.Entry<String, String> e : cfg.producerProps.entrySet()) props.put(e.getKey(), shadedClassNames(e.getValue()));
    Thread t = Thread.currentThread();
    ClassLoader cl = t.getContextClassLoader();
    t.setContextClassLoader(KafkaSink.class.getClassLoader());
    try {
      return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    } finally {
      t.setContextClassLoader(cl);
    }
  }

  /** Sends asynchronously; false (and counted) when Kafka is down. */
  boolean send(String key, byte[] value) {
    KafkaProducer<byte[], byte[]> p;
    synchronized (lock) {
      if (down()) {
        p = null;
      } else {
        if (producer == null) producer = create();
        p = awaitTopic(producer) ? producer : null;
      }
    }
    if (p == null) {
      metrics.droppedKafkaDown.incrementAndGet();
      log.warn("down", "Kafka " + cfg.bootstrapServers + " topic " + cfg.topic + " is not reachable: event dropped ("
          + metrics.droppedKafkaDown.get() + " so far; next attempt in at most " + cfg.kafkaRetryMs + " ms)", null);
      return false;
    }
    ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(cfg.topic,
        key == null ? null : key.getBytes(StandardCharsets.UTF_8), value);
    inFlight.incrementAndGet();
    try {
      p.send(record, (m, e) -> {
        inFlight.decrementAndGet();
        if (e == null) {
          metrics.published.incrementAndGet();
        } else {
          metrics.sendErrors.incrementAndGet();
          log.warn("send", "failed to publish an event to Kafka topic " + cfg.topic, e);
        }
      });
    } catch (RuntimeException e) {
      inFlight.decrementAndGet();
      if (e.getClass().getName().endsWith("TimeoutException")) markDown();
      throw e;
    }
    return true;
  }

  private boolean awaitTopic(KafkaProducer<byte[], byte[]> p) {
    if (topicKnown) return true;
    for (int attempt = 1; attempt <= 2; attempt++) {
      try {
        p.partitionsFor(cfg.topic);
        topicKnown = true;
        return true;
      } catch (RuntimeException e) {
        log.warn("metadata", "Kafka topic " + cfg.topic + " not reachable (attempt " + attempt + " of 2)", e);
      }
    }
    markDown();
    return false;
  }

  /** Flushes and closes within the timeout (0 = abort what is in flight). */
  void close(long timeoutMs) {
    KafkaProducer<byte[], byte[]> p = producer;
    if (p == null) return;
    try {
      p.close(Duration.ofMillis(Math.max(0L, timeoutMs)));
    } catch (RuntimeException e) {
      log.warn("close", "closing the Kafka producer failed", e);
    }
    synchronized (lock) {
      if (producer == p) {
        producer = null;
        topicKnown = false;
      }
    }
  }

  // Built at run time so that the shade plugin does not relocate the literal.
  private static final String UNSHADED = String.join(".", "org", "apache", "kafka") + ".";
  private static final String SHADED;

  static {
    String n = KafkaProducer.class.getName();
    SHADED = n.substring(0, n.length() - "clients.producer.KafkaProducer".length());
  }

  /** User settings such as sasl.jaas.config name Kafka classes: point them at the shaded copy. */
  static String shadedClassNames(String v) {
    if (v == null || SHADED.equals(UNSHADED) || v.contains(SHADED)) return v;
    return v.replace(UNSHADED, SHADED);
  }
}
