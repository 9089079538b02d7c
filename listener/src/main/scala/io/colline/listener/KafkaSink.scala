package io.colline.listener

import java.nio.charset.StandardCharsets
import java.time.Duration
import java.util.Properties
import java.util.concurrent.atomic.AtomicLong

import scala.util.control.NonFatal

import org.apache.kafka.clients.producer.{Callback, KafkaProducer, ProducerConfig, ProducerRecord, RecordMetadata}
import org.apache.kafka.common.compress.Compression
import org.apache.kafka.common.record.RecordBatch
import org.apache.kafka.common.serialization.ByteArraySerializer
import org.apache.kafka.common.utils.ByteBufferOutputStream

/**
 * Kafka publishing: one lazily created producer; kafka-clients is shaded into the jar.
 *
 * Blocking is bounded and happens on the publisher thread only: a producer's first metadata fetch
 * waits at most 2 x `max.block.ms`. While the topic's metadata cannot be fetched Kafka counts as
 * down: events are dropped at once (`droppedKafkaDown`) and a new attempt is made after
 * `spark.colline.kafka.retryMs`, so a dead broker never builds up a backlog.
 */
private[listener] final class KafkaSink(cfg: Config, metrics: Metrics, log: RateLimitedLog) {
  private val lock = new Object
  @volatile private var producer: KafkaProducer[Array[Byte], Array[Byte]] = _
  @volatile private var downUntil = 0L
  @volatile private var topicKnown = false
  /** records handed to the producer and not yet acknowledged or failed */
  val inFlight = new AtomicLong

  def down: Boolean = System.currentTimeMillis() < downUntil

  /** Kafka made no progress (metadata or send timed out, or a drain stalled): drop for `kafka.retryMs`. */
  def markDown(): Unit = {
    downUntil = System.currentTimeMillis() + cfg.kafkaRetryMs
    topicKnown = false
  }

  private def create(): KafkaProducer[Array[Byte], Array[Byte]] = {
    val props = new Properties()
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cfg.bootstrapServers)
    props.put(ProducerConfig.ACKS_CONFIG, "all")
    if (!cfg.producerProps.contains(ProducerConfig.COMPRESSION_TYPE_CONFIG))
      props.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, KafkaSink.compression)
    props.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, (16 * 1024 * 1024).toString)
    props.put(ProducerConfig.BUFFER_MEMORY_CONFIG, (64L * 1024 * 1024).toString)
    // send() blocks only this publisher thread (never Spark's); a first metadata fetch on a busy
    // driver took more than 5 s in tests, so allow 10 s, twice (see awaitTopic)
    props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "10000")
    props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000")
    props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "30000")
    props.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "5000")
    props.put(ProducerConfig.LINGER_MS_CONFIG, "20")
    props.put(ProducerConfig.CLIENT_ID_CONFIG, "colline-listener")
    cfg.producerProps.foreach { case (k, v) => props.put(k, KafkaSink.shadedClassNames(v)) }
    val cl = Thread.currentThread().getContextClassLoader
    Thread.currentThread().setContextClassLoader(getClass.getClassLoader)
    try new KafkaProducer[Array[Byte], Array[Byte]](props, new ByteArraySerializer, new ByteArraySerializer)
    finally Thread.currentThread().setContextClassLoader(cl)
  }

  /** Sends asynchronously; false (and counted) when Kafka is down. */
  def send(key: String, value: Array[Byte]): Boolean = {
    val p = lock.synchronized {
      if (down) null
      else {
        if (producer == null) producer = create()
        if (!awaitTopic(producer)) null else producer
      }
    }
    if (p == null) {
      metrics.droppedKafkaDown.incrementAndGet()
      log.warn("down", s"Kafka ${cfg.bootstrapServers} topic ${cfg.topic} is not reachable: event dropped " +
        s"(${metrics.droppedKafkaDown.get} so far; next attempt in at most ${cfg.kafkaRetryMs} ms)")
      return false
    }
    val record = new ProducerRecord[Array[Byte], Array[Byte]](
      cfg.topic, if (key == null) null else key.getBytes(StandardCharsets.UTF_8), value)
    inFlight.incrementAndGet()
    try p.send(record, new Callback {
      override def onCompletion(m: RecordMetadata, e: Exception): Unit = {
        inFlight.decrementAndGet()
        if (e == null) metrics.published.incrementAndGet()
        else {
          metrics.sendErrors.incrementAndGet()
          log.warn("send", s"failed to publish an event to Kafka topic ${cfg.topic}", e)
        }
      }
    }) catch {
      case t: Throwable =>
        inFlight.decrementAndGet()
        // a send blocked on metadata for max.block.ms: the broker is gone, do not block the next events too
        if (t.getClass.getName.endsWith("TimeoutException")) markDown()
        throw t
    }
    true
  }

  /**
   * A send whose topic metadata is not there within max.block.ms fails and the event is lost, so
   * a new producer (and a producer after an outage) first waits for the topic's metadata: twice
   * max.block.ms at most. On failure Kafka is down for `kafka.retryMs`.
   */
  private def awaitTopic(p: KafkaProducer[Array[Byte], Array[Byte]]): Boolean = {
    if (topicKnown) return true
    var attempt = 1
    while (attempt <= 2) {
      try {
        p.partitionsFor(cfg.topic)
        topicKnown = true
        return true
      } catch {
        case NonFatal(e) =>
          log.warn("metadata", s"Kafka topic ${cfg.topic} not reachable (attempt $attempt of 2)", e)
          attempt += 1
      }
    }
    markDown()
    false
  }

  /** Flushes and closes within the timeout (0 = abort what is in flight); a later send creates a new producer. */
  def close(timeoutMs: Long): Unit = {
    // not under `lock`: the publisher thread may be blocked in a metadata fetch while holding it
    val p = producer
    if (p != null) {
      try p.close(Duration.ofMillis(math.max(0L, timeoutMs)))
      catch { case NonFatal(e) => log.warn("close", "closing the Kafka producer failed", e) }
      lock.synchronized {
        if (producer eq p) {
          producer = null
          topicKnown = false
        }
      }
    }
  }
}

private[listener] object KafkaSink {
  // Built at run time so that the shade plugin does not relocate the literal.
  private val Unshaded = Seq("org", "apache", "kafka").mkString(".") + "."
  private val Shaded = {
    val n = classOf[KafkaProducer[_, _]].getName
    n.substring(0, n.length - "clients.producer.KafkaProducer".length)
  }

  /**
   * The codecs of the default `compression.type`, best first. kafka-clients 3.8+ compresses zstd with
   * classes of zstd-jni 1.5 (`ZstdOutputStreamNoFinalizer`, `BufferPool`), which the driver's classpath
   * provides, as Spark does (zstd-jni is a JNI library: it cannot be relocated into this jar); Spark 2.4
   * ships zstd-jni 1.4.4, without them. lz4-java is in every Spark; gzip needs only the JDK.
   */
  val Codecs: Seq[String] = Seq("zstd", "lz4", "gzip")

  /** The default `compression.type`: the first of `Codecs` that compresses here; chosen once per JVM, a fallback logged once. */
  lazy val compression: String = {
    val (codec, failed) = choose(Codecs, problem)
    failed.foreach { case (c, t) =>
      WarnOnce(s"Kafka compression $c does not work with the classes on this driver's classpath: using $codec " +
        "(spark.colline.kafka.compression.type sets it)", t)
    }
    codec
  }

  /** The first codec without a `problem` ("none" when all have one), and the problems of those before it. */
  def choose(codecs: Seq[String], problem: String => Option[Throwable]): (String, Seq[(String, Throwable)]) = {
    val failed = Seq.newBuilder[(String, Throwable)]
    val ok = codecs.find(c => problem(c) match {
      case Some(t) => failed += c -> t; false
      case None => true
    })
    (ok.getOrElse("none"), failed.result())
  }

  /** Why kafka-clients cannot compress with `codec` here (a class or native library missing), by compressing a few bytes. */
  def problem(codec: String): Option[Throwable] = try {
    val out = Compression.of(codec).build().wrapForOutput(new ByteBufferOutputStream(256), RecordBatch.CURRENT_MAGIC_VALUE)
    out.write(new Array[Byte](64))
    out.close()
    None
  } catch { case t @ (_: LinkageError | NonFatal(_)) => Some(t) }

  /** User config such as sasl.jaas.config names Kafka classes: point them at the shaded copy. */
  def shadedClassNames(v: String): String =
    if (v == null || Shaded == Unshaded || v.contains(Shaded)) v else v.replace(Unshaded, Shaded)
}
