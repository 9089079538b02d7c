package io.colline.listener

import java.nio.file.{Files, Paths}
import java.util.concurrent.{ArrayBlockingQueue, TimeUnit}
import java.util.concurrent.atomic.AtomicInteger

import scala.util.Try
import scala.util.control.NonFatal

import org.apache.spark.SparkContext

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
