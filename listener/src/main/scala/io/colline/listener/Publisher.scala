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
import org.apache.kafka.common.compress.Compression
import org.apache.kafka.common.record.RecordBatch
import org.apache.kafka.common.serialization.ByteArraySerializer
import org.apache.kafka.common.utils.ByteBufferOutputStream
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
  /** nested writes (the inner insert of a CTAS, …): not published, the outer command's event carries their lineage */
  val droppedNested = new AtomicLong
  val droppedOversize = new AtomicLong
  val droppedKafkaDown = new AtomicLong
  val truncated = new AtomicLong
  val streamsPublished = new AtomicLong
  val built = new AtomicLong
  val published = new AtomicLong
  val sendErrors = new AtomicLong
  val fileErrors = new AtomicLong
  val internalErrors = new AtomicLong

  def snapshot: Map[String, Long] = Map(
    "seen" -> seen.get, "enqueued" -> enqueued.get, "droppedQueueFull" -> droppedQueueFull.get,
    "droppedCommandResult" -> droppedCommandResult.get, "droppedNotCommand" -> droppedNotCommand.get,
    "droppedNoLineage" -> droppedNoLineage.get, "droppedNested" -> droppedNested.get, "droppedOversize" -> droppedOversize.get,
    "droppedKafkaDown" -> droppedKafkaDown.get, "streams" -> streamsPublished.get,
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
    val l = last.computeIfAbsent(key, RateLimitedLog.Zero)
    val s = suppressed.computeIfAbsent(key, RateLimitedLog.Zero)
    val prev = l.get
    if (now - prev >= intervalMs && l.compareAndSet(prev, now)) {
      val n = s.getAndSet(0L)
      val text = "colline: " + msg + (if (n > 0) s" ($n similar messages suppressed)" else "")
      log.warn(Causes.append(text, t))
    } else s.incrementAndGet()
  } catch { case _: Throwable => }

  def info(msg: => String): Unit = try log.info("colline: " + msg) catch { case _: Throwable => }
}

private[listener] object RateLimitedLog {
  /** A new counter at 0 (an explicit Function: Scala 2.11 has no SAM conversion). */
  val Zero: java.util.function.Function[String, AtomicLong] = new java.util.function.Function[String, AtomicLong] {
    def apply(k: String): AtomicLong = new AtomicLong(0L)
  }
}

/** An error with its causes on one line: the root cause is what says why (a class missing, a refused connection). */
private[listener] object Causes {
  /**
   * `text: outer; caused by: inner; caused by: root`, at most 8 deep; `text` alone when `t` is null.
   * Each message goes through `Redact.secrets`: an exception may quote a URL or an option with a
   * credential, and the driver's log is read by more people than the job's owner.
   */
  def append(text: String, t: Throwable): String = {
    if (t == null) return text
    val seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap[Throwable, java.lang.Boolean])
    text + ": " + Iterator.iterate(t)(_.getCause).takeWhile(c => c != null && seen.add(c)).take(8).map { c =>
      val m = c.getLocalizedMessage
      if (m == null) c.getClass.getName else c.getClass.getName + ": " + Redact.secrets(m)
    }.mkString("; caused by: ")
  }
}

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

/**
 * The JVM-wide publisher: a bounded queue drained by one daemon thread that builds each event,
 * writes it to `output.dir` (optional) and sends it to Kafka (optional).
 */
private[listener] final class Publisher(val cfg: Config) {
  val metrics = new Metrics
  val log = new RateLimitedLog(30000L)
  val tracker = new ExecutionTracker(this)
  private val queue = new ArrayBlockingQueue[AnyRef](cfg.queueCapacity)
  Redact.configure(cfg.redactionRegex)
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
    val h = new Thread(new Runnable { def run(): Unit = shutdownHook() }, "colline-shutdown")
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

  /** Called on the listener-bus thread: never blocks. A Pending query or a Runnable (streams). */
  def offer(p: AnyRef): Unit =
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
          try p match {
            case x: Pending => process(x)
            case r: Runnable => r.run()
            case _ =>
          } finally busy = false
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
    Faults.maybeThrow(cfg, "build")
    val exec = if (Compat.tracksExecutions) tracker.lookup(p.qeId) else None
    // A nested write (the inner insert of a CTAS, …) is not published: the outer command's event
    // carries the same lineage with the real target. Only its location is kept, to complete the
    // outer write (a CTAS target has no location before it is created); nothing else is built.
    val nested = exec.filter(_.nestedWrite).flatMap(x => EventBuilder.firstWrite(p.plan).map(x -> _))
    nested.foreach { case (x, d) =>
      EventBuilder.location(d).foreach(nestedLocations.put(x.rootExecutionId, _))
      metrics.droppedNested.incrementAndGet()
    }
    if (nested.isEmpty) EventBuilder.build(p, exec, cfg) match {
      case Skipped(_) => metrics.droppedNoLineage.incrementAndGet()
      case Event(json, executionId, rootClass) =>
        exec.filter(!_.nestedWrite).foreach { x =>
          val writes = EventBuilder.writeDatasets(json)
          if (writes.nonEmpty) nestedLocations.remove(x.rootExecutionId).foreach(l => writes.foreach(EventBuilder.completeFrom(_, l)))
        }
        publish(json, executionId, rootClass, p.appId)
    }
  }

  /** Scrubs, caps (degraded forms above `event.maxBytes`), writes and sends one event. */
  def publish(json: J.Obj, executionId: Long, rootClass: String, key: String): Unit = {
    val (bytes, level) = Seal(json, cfg.maxEventBytes)
    if (level > 0) metrics.truncated.incrementAndGet()
    if (bytes.length > cfg.maxEventBytes) {
      metrics.droppedOversize.incrementAndGet()
      log.warn("oversize", s"event of ${bytes.length} bytes is above spark.colline.event.maxBytes " +
        s"(${cfg.maxEventBytes}) even in its smallest degraded form: dropped")
    } else {
      if (level > 0) log.warn("truncated", s"event of execution $executionId above spark.colline.event.maxBytes " +
        s"(${cfg.maxEventBytes}): sent degraded (level $level, ${bytes.length} bytes)")
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
        try k.send(key, bytes)
        catch {
          case NonFatal(e) =>
            metrics.sendErrors.incrementAndGet()
            log.warn("send", s"failed to publish an event to Kafka topic ${cfg.topic}", e)
        }
      }
    }
  }

  /** Events queued, being built or not yet acknowledged by Kafka. */
  private def pending: Long = queue.size + (if (busy) 1 else 0) + kafka.map(_.inFlight.get).getOrElse(0L)

  /**
   * Waits until everything pending is written and acknowledged, at most `timeoutMs`, and gives up
   * early when records handed to Kafka go unacknowledged for `shutdown.stallMs` (Kafka down: no
   * point in waiting). Building an event or connecting a new producer is not a stall (a first
   * connection on a busy driver takes seconds; a failed one marks Kafka down, which ends the wait).
   * What is left is counted (`droppedKafkaDown`, `sendErrors`) as the producer is closed.
   */
  private def awaitIdle(timeoutMs: Long): Unit = {
    val deadline = System.currentTimeMillis() + timeoutMs
    var last = pending
    var lastProgress = System.currentTimeMillis()
    while (last > 0 && worker.isAlive && System.currentTimeMillis() < deadline &&
      System.currentTimeMillis() - lastProgress < cfg.drainStallMs && !kafka.exists(_.down)) {
      Thread.sleep(5)
      val now = pending
      if (now < last || !kafka.exists(_.inFlight.get > 0)) lastProgress = System.currentTimeMillis()
      last = now
    }
    val stalled = last > 0
    if (stalled) {
      log.warn("drain", s"$last event(s) still pending after waiting (Kafka slow or down): giving up")
      kafka.foreach(_.markDown()) // what is still queued is dropped and counted at once
    }
    kafka.foreach(_.close(if (stalled) 0L else math.min(1000L, deadline - System.currentTimeMillis())))
    // aborted sends and events dropped while Kafka is down are counted within moments: settle the counters
    val settle = System.currentTimeMillis() + 1000L
    while (stalled && pending > 0 && worker.isAlive && System.currentTimeMillis() < settle) Thread.sleep(5)
  }

  /** Waits (bounded) until the queue is empty, then flushes and closes the producer. */
  def drain(timeoutMs: Long): Unit = {
    awaitIdle(timeoutMs)
    log.info("drained: " + metrics.snapshot.toSeq.sortBy(_._1).map { case (k, v) => s"$k=$v" }.mkString(", "))
  }

  /** `seen` when the last shutdown report was made; -1 before the first. */
  @volatile private var reportedAt = -1L

  /**
   * The shutdown report: events lost (they should have been published: queue full, Kafka down,
   * over the size cap even degraded, send failed), events published, and executions not published
   * by design. `where` says when it is made (application end, JVM shutdown).
   */
  def report(where: String): String = {
    val m = metrics
    val lost = m.droppedQueueFull.get + m.droppedKafkaDown.get + m.droppedOversize.get + m.sendErrors.get
    val byDesign = m.droppedCommandResult.get + m.droppedNotCommand.get + m.droppedNoLineage.get + m.droppedNested.get
    s"at $where: ${m.seen.get} query executions seen, ${m.published.get} events published " +
      s"(${m.truncated.get} degraded to fit event.maxBytes), $lost lost (queue full ${m.droppedQueueFull.get}, " +
      s"Kafka down ${m.droppedKafkaDown.get}, too large ${m.droppedOversize.get}, send errors ${m.sendErrors.get}), " +
      s"$byDesign not published by design (command results ${m.droppedCommandResult.get}, plain queries " +
      s"${m.droppedNotCommand.get}, no lineage ${m.droppedNoLineage.get}, nested writes ${m.droppedNested.get})" +
      (if (lost > 0) s"; raise spark.colline.queue.capacity (${cfg.queueCapacity}) if the queue was full" else "")
  }

  private def lost: Long =
    metrics.droppedQueueFull.get + metrics.droppedKafkaDown.get + metrics.droppedOversize.get + metrics.sendErrors.get

  /** Logs the report at application end: WARN when events were lost, else INFO. */
  def reportEnd(): Unit = try {
    reportedAt = metrics.seen.get
    val text = report("application end")
    if (lost > 0) log.warn("shutdown", text) else log.info(text)
  } catch { case _: Throwable => }

  /** Final: drain, stop the worker, close the producer. */
  def shutdown(timeoutMs: Long): Unit = try {
    if (!stopped) {
      awaitIdle(timeoutMs)
      stopped = true
    }
  } catch { case _: Throwable => }

  /**
   * The JVM shutdown hook: drain, then report unless the application end already did with nothing
   * seen since. Logging may be shut down by then (log4j has its own hook), so the report goes to
   * stderr, where Spark's console log goes too.
   */
  private def shutdownHook(): Unit = try {
    shutdown(cfg.shutdownTimeoutMs)
    if (reportedAt != metrics.seen.get) System.err.println("colline: " + report("JVM shutdown"))
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
