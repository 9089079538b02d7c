package io.colline.listener

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}
import java.time.Duration
import java.util.Properties
import java.util.concurrent.{ArrayBlockingQueue, TimeUnit}
import java.util.concurrent.atomic.{AtomicInteger, AtomicLong}

import scala.util.Try
import scala.util.control.NonFatal

import org.apache.kafka.clients.producer.{Callback, KafkaProducer, ProducerConfig, ProducerRecord, RecordMetadata}
import org.apache.kafka.common.serialization.ByteArraySerializer
import org.slf4j.LoggerFactory

import org.apache.spark.SparkContext

/** Counters of the listener, readable through `CollineListener.stats()`. */
private[listener] final class Metrics {
  val seen = new AtomicLong
  val enqueued = new AtomicLong
  val droppedQueueFull = new AtomicLong
  val droppedCommandResult = new AtomicLong
  val droppedNotCommand = new AtomicLong
  val droppedNoLineage = new AtomicLong
  val droppedOversize = new AtomicLong
  val truncated = new AtomicLong
  val built = new AtomicLong
  val published = new AtomicLong
  val sendErrors = new AtomicLong
  val fileErrors = new AtomicLong
  val internalErrors = new AtomicLong

  def snapshot: Map[String, Long] = Map(
    "seen" -> seen.get, "enqueued" -> enqueued.get, "droppedQueueFull" -> droppedQueueFull.get,
    "droppedCommandResult" -> droppedCommandResult.get, "droppedNotCommand" -> droppedNotCommand.get,
    "droppedNoLineage" -> droppedNoLineage.get, "droppedOversize" -> droppedOversize.get,
    "truncated" -> truncated.get, "built" -> built.get, "published" -> published.get,
    "sendErrors" -> sendErrors.get, "fileErrors" -> fileErrors.get, "internalErrors" -> internalErrors.get)
}

/** At most one WARN line per interval per key; the suppressed count is reported with the next one. */
private[listener] final class RateLimitedLog(intervalMs: Long) {
  private val log = LoggerFactory.getLogger("io.colline.listener.CollineListener")
  private val last = new java.util.concurrent.ConcurrentHashMap[String, AtomicLong]()
  private val suppressed = new java.util.concurrent.ConcurrentHashMap[String, AtomicLong]()

  def warn(key: String, msg: => String, t: Throwable = null): Unit = try {
    val now = System.currentTimeMillis()
    val l = last.computeIfAbsent(key, _ => new AtomicLong(0L))
    val s = suppressed.computeIfAbsent(key, _ => new AtomicLong(0L))
    val prev = l.get
    if (now - prev >= intervalMs && l.compareAndSet(prev, now)) {
      val n = s.getAndSet(0L)
      val text = "colline: " + msg + (if (n > 0) s" ($n similar messages suppressed)" else "")
      if (t == null) log.warn(text) else log.warn(text + ": " + t.toString)
    } else s.incrementAndGet()
  } catch { case _: Throwable => }

  def info(msg: => String): Unit = try log.info("colline: " + msg) catch { case _: Throwable => }
}

/** Kafka publishing: one lazily created producer; kafka-clients is shaded into the jar. */
private[listener] final class KafkaSink(cfg: Config, metrics: Metrics, log: RateLimitedLog) {
  private val lock = new Object
  private var producer: KafkaProducer[Array[Byte], Array[Byte]] = _

  private def create(): KafkaProducer[Array[Byte], Array[Byte]] = {
    val props = new Properties()
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cfg.bootstrapServers)
    props.put(ProducerConfig.ACKS_CONFIG, "all")
    props.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "zstd")
    props.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, (16 * 1024 * 1024).toString)
    props.put(ProducerConfig.BUFFER_MEMORY_CONFIG, (64L * 1024 * 1024).toString)
    // send() blocks only this publisher thread (never Spark's), but a first metadata fetch on a
    // busy driver took more than 2 s in tests and the event was lost: allow 10 s (see awaitTopic).
    props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "10000")
    props.put(ProducerConfig.LINGER_MS_CONFIG, "20")
    props.put(ProducerConfig.CLIENT_ID_CONFIG, "colline-listener")
    cfg.producerProps.foreach { case (k, v) => props.put(k, KafkaSink.shadedClassNames(v)) }
    val cl = Thread.currentThread().getContextClassLoader
    Thread.currentThread().setContextClassLoader(getClass.getClassLoader)
    try new KafkaProducer[Array[Byte], Array[Byte]](props, new ByteArraySerializer, new ByteArraySerializer)
    finally Thread.currentThread().setContextClassLoader(cl)
  }

  def send(key: String, value: Array[Byte]): Unit = lock.synchronized {
    if (producer == null) {
      producer = create()
      awaitTopic()
    }
    val record = new ProducerRecord[Array[Byte], Array[Byte]](
      cfg.topic, if (key == null) null else key.getBytes(StandardCharsets.UTF_8), value)
    producer.send(record, new Callback {
      override def onCompletion(m: RecordMetadata, e: Exception): Unit =
        if (e == null) metrics.published.incrementAndGet()
        else {
          metrics.sendErrors.incrementAndGet()
          log.warn("send", s"failed to publish an event to Kafka topic ${cfg.topic}", e)
        }
    })
  }

  /**
   * A send whose topic metadata is not there within max.block.ms fails through its callback and
   * the event is lost, so a new producer first waits for the topic's metadata: up to three times
   * max.block.ms, on the publisher thread only (events queue up meanwhile, bounded).
   */
  private def awaitTopic(): Unit = {
    var attempt = 1
    while (attempt <= 3) {
      try { producer.partitionsFor(cfg.topic); return }
      catch {
        case NonFatal(e) =>
          log.warn("metadata", s"Kafka topic ${cfg.topic} not reachable yet (attempt $attempt of 3)", e)
          attempt += 1
      }
    }
  }

  /** Flushes and closes within the timeout; a later send creates a new producer. */
  def close(timeoutMs: Long): Unit = lock.synchronized {
    if (producer != null) {
      try producer.close(Duration.ofMillis(math.max(0L, timeoutMs)))
      catch { case NonFatal(e) => log.warn("close", "closing the Kafka producer failed", e) }
      producer = null
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

  /** User config such as sasl.jaas.config names Kafka classes: point them at the shaded copy. */
  def shadedClassNames(v: String): String =
    if (v == null || Shaded == Unshaded || v.contains(Shaded)) v else v.replace(Unshaded, Shaded)
}

/**
 * The JVM-wide publisher: a bounded queue drained by one daemon thread that builds each event,
 * writes it to `output.dir` (optional) and sends it to Kafka (optional).
 */
private[listener] final class Publisher(val cfg: Config) {
  val metrics = new Metrics
  val log = new RateLimitedLog(30000L)
  val tracker = new ExecutionTracker(this)
  private val queue = new ArrayBlockingQueue[Pending](cfg.queueCapacity)
  private val kafka = if (cfg.kafkaEnabled) Some(new KafkaSink(cfg, metrics, log)) else None
  private val seq = new AtomicInteger(0)
  /** rootExecutionId -> location written by a nested write (to complete the outer write) */
  private val nestedLocations = new Bounded[Long, String](1000)
  @volatile private var busy = false
  @volatile private var stopped = false
  @volatile private var attachedTo: SparkContext = _

  private val worker: Thread = {
    val t = new Thread(null, new Runnable { def run(): Unit = loop() }, "colline-publisher", 16L * 1024 * 1024)
    t.setDaemon(true)
    t.start()
    t
  }

  private val hook: Thread = {
    val h = new Thread(new Runnable { def run(): Unit = shutdown(cfg.shutdownTimeoutMs) }, "colline-shutdown")
    Try(Runtime.getRuntime.addShutdownHook(h))
    h
  }

  log.info(s"listener ${Versions.listener} on Spark ${Versions.spark}/Scala ${Versions.scalaBinary}: " +
    s"kafka=${if (cfg.kafkaEnabled) cfg.bootstrapServers + " topic " + cfg.topic else "off"}, " +
    s"output.dir=${cfg.outputDir.getOrElse("-")}, queue=${cfg.queueCapacity}")

  /** Registers the execution tracker on this SparkContext (once per context). */
  def attach(sc: SparkContext): Unit = if (sc != null && (attachedTo ne sc)) synchronized {
    if (attachedTo ne sc) {
      sc.addSparkListener(tracker)
      attachedTo = sc
    }
  }

  /** Called on the listener-bus thread: never blocks. */
  def offer(p: Pending): Unit =
    if (stopped) metrics.droppedQueueFull.incrementAndGet()
    else if (queue.offer(p)) metrics.enqueued.incrementAndGet()
    else {
      metrics.droppedQueueFull.incrementAndGet()
      log.warn("queueFull", s"event queue full (capacity ${cfg.queueCapacity}): dropped an event " +
        s"(${metrics.droppedQueueFull.get} dropped so far)")
    }

  private def loop(): Unit = {
    while (!stopped || !queue.isEmpty) {
      try {
        val p = queue.poll(200, TimeUnit.MILLISECONDS)
        if (p != null) {
          busy = true
          try process(p) finally busy = false
        }
      } catch {
        case _: InterruptedException => // keep draining until stopped and empty
        case t: Throwable =>
          metrics.internalErrors.incrementAndGet()
          log.warn("process", "failed to build or publish an event", t)
      }
    }
  }

  private def process(p: Pending): Unit = {
    val exec = tracker.lookup(p.qeId)
    EventBuilder.build(p, exec, cfg) match {
      case Skipped(_) => metrics.droppedNoLineage.incrementAndGet()
      case Event(json, executionId, rootClass) =>
        exec.foreach { x =>
          val writes = EventBuilder.writeDatasets(json)
          if (x.nestedWrite) writes.flatMap(EventBuilder.location).headOption.foreach(nestedLocations.put(x.rootExecutionId, _))
          else if (writes.nonEmpty) nestedLocations.remove(x.rootExecutionId).foreach(l => writes.foreach(EventBuilder.completeFrom(_, l)))
        }
        var bytes = J.toBytes(json)
        if (bytes.length > cfg.maxEventBytes) {
          EventBuilder.degrade(json)
          bytes = J.toBytes(json)
          metrics.truncated.incrementAndGet()
        }
        if (bytes.length > cfg.maxEventBytes) {
          metrics.droppedOversize.incrementAndGet()
          log.warn("oversize", s"event of ${bytes.length} bytes is above spark.colline.event.maxBytes " +
            s"(${cfg.maxEventBytes}) even without expressions: dropped")
        } else {
          metrics.built.incrementAndGet()
          cfg.outputDir.foreach { dir =>
            try {
              val d = Paths.get(dir)
              Files.createDirectories(d)
              val name = f"${seq.incrementAndGet()}%04d-$executionId-$rootClass.json"
              Files.write(d.resolve(name), J.toBytes(json, pretty = true))
            } catch {
              case NonFatal(e) =>
                metrics.fileErrors.incrementAndGet()
                log.warn("file", s"failed to write an event under $dir", e)
            }
          }
          kafka.foreach { k =>
            try k.send(p.appId, bytes)
            catch {
              case NonFatal(e) =>
                metrics.sendErrors.incrementAndGet()
                log.warn("send", s"failed to publish an event to Kafka topic ${cfg.topic}", e)
            }
          }
        }
    }
  }

  /** Waits until the queue is empty (bounded), then flushes and closes the producer. */
  def drain(timeoutMs: Long): Unit = {
    val deadline = System.currentTimeMillis() + timeoutMs
    while ((!queue.isEmpty || busy) && worker.isAlive && System.currentTimeMillis() < deadline)
      Thread.sleep(10)
    kafka.foreach(_.close(deadline - System.currentTimeMillis()))
    log.info("drained: " + metrics.snapshot.toSeq.sortBy(_._1).map { case (k, v) => s"$k=$v" }.mkString(", "))
  }

  /** Final: drain, stop the worker, close the producer. */
  def shutdown(timeoutMs: Long): Unit = try {
    if (!stopped) {
      val deadline = System.currentTimeMillis() + timeoutMs
      while ((!queue.isEmpty || busy) && worker.isAlive && System.currentTimeMillis() < deadline)
        Thread.sleep(10)
      stopped = true
      kafka.foreach(_.close(deadline - System.currentTimeMillis()))
    }
  } catch { case _: Throwable => }

  def removeShutdownHook(): Unit = Try(Runtime.getRuntime.removeShutdownHook(hook))
}

/** The single publisher of this JVM (re-created only when the colline settings change). */
private[listener] object Colline {
  @volatile private var current: Publisher = _

  def publisher(cfg: Config): Publisher = synchronized {
    if (current == null || current.cfg != cfg) {
      if (current != null) {
        current.shutdown(cfg.shutdownTimeoutMs)
        current.removeShutdownHook()
      }
      current = new Publisher(cfg)
    }
    current
  }

  def get: Option[Publisher] = Option(current)
}
