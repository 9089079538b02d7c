package io.colline.listener

import scala.util.Try

import org.apache.spark.{SparkConf, SparkContext, SparkEnv}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.QueryExecution
import org.apache.spark.sql.util.QueryExecutionListener

/**
 * colline's QueryExecutionListener. Register it with
 * `spark.sql.queryExecutionListeners=io.colline.listener.CollineListener`.
 *
 * On the listener-bus thread it only filters and snapshots (cheap, never blocks, never throws);
 * the event is built, written and published on the publisher's own daemon thread.
 */
class CollineListener(conf: SparkConf) extends QueryExecutionListener {

  def this() = this(Option(SparkEnv.get).map(_.conf).getOrElse(new SparkConf()))

  private val publisher: Option[Publisher] = try {
    val cfg = Config.from(conf)
    Faults.maybeThrow(cfg, "init")
    if (!cfg.enabled) None
    else {
      val p = Colline.publisher(cfg)
      // the SparkContext exists while sessions load their listeners
      if (SparkEnv.get != null) Try(p.attach(SparkContext.getOrCreate()))
      Some(p)
    }
  } catch {
    case t: Throwable =>
      WarnOnce("the listener failed to start and is off for this session (no lineage is published)", t)
      None
  }

  override def onSuccess(funcName: String, qe: QueryExecution, durationNs: Long): Unit =
    handle(funcName, qe, None, Some(durationNs))

  override def onFailure(funcName: String, qe: QueryExecution, exception: Exception): Unit =
    handle(funcName, qe, Option(exception), None)

  private def handle(funcName: String, qe: QueryExecution, error: Option[Throwable], durationNs: Option[Long]): Unit =
    publisher.foreach { pub =>
      try {
        pub.metrics.seen.incrementAndGet()
        Faults.maybeThrow(pub.cfg, "handle")
        val session = qe.sparkSession
        val sc = session.sparkContext
        pub.attach(sc)
        if (pub.cfg.streaming) Streaming.register(session, pub)
        if (error.isEmpty && Try(Compat.isCommandResult(qe)).getOrElse(false)) {
          pub.metrics.droppedCommandResult.incrementAndGet()
        } else if (!CollineListener.CommandFuncs(funcName) && !pub.cfg.publishReads) {
          pub.metrics.droppedNotCommand.incrementAndGet()
        } else {
          val plan: LogicalPlan = Compat.qualify(
            if (error.isEmpty) qe.analyzed else Try(qe.analyzed).getOrElse(qe.logical), session)
          val redaction = Try(session.sessionState.conf.stringRedactionPattern).toOption.flatten
          val err = error.map(t => Redact.truncate(Redact.text(CollineListener.describe(t), redaction), EventBuilder.ErrorMax))
          pub.offer(Pending(
            funcName = funcName,
            plan = plan,
            qeId = Compat.queryExecutionId(qe),
            success = error.isEmpty,
            error = err,
            durationNs = durationNs,
            endedAtMs = System.currentTimeMillis(),
            appId = Try(sc.applicationId).getOrElse(null),
            appName = Try(sc.appName).getOrElse(null),
            user = Try(sc.sparkUser).getOrElse(null),
            redaction = redaction,
            parent = ParentRun.from(k => session.conf.getOption(k), WarnOnce(_))))
        }
      } catch {
        case t: Throwable =>
          Try(pub.metrics.internalErrors.incrementAndGet())
          Try(pub.log.warn("listener", "failed to handle a query execution", t))
      }
    }
}

object CollineListener {
  /**
   * `Class: first line of the message`, plus the root cause the same way when it differs (Spark
   * wraps task failures in messages that carry whole stack traces).
   */
  private[listener] def describe(t: Throwable): String = {
    def line(x: Throwable) = x.getClass.getName + ": " + String.valueOf(x.getMessage).split("\n", 2)(0)
    var root = t
    var depth = 0
    while (root.getCause != null && (root.getCause ne root) && depth < 20) { root = root.getCause; depth += 1 }
    if (root eq t) line(t) else line(t) + " (cause: " + line(root) + ")"
  }

  /** funcNames of command executions (QueryExecution.commandExecutionName, 4.1 multi-commands). */
  val CommandFuncs: Set[String] =
    Set("command", "create", "replace", "append", "overwrite", "overwritePartitions", "multi-commands")

  /** The listener's counters (events seen, enqueued, dropped by reason, published, errors). */
  def stats(): java.util.Map[String, java.lang.Long] = {
    val m = new java.util.TreeMap[String, java.lang.Long]()
    Colline.get.foreach(_.metrics.snapshot.foreach { case (k, v) => m.put(k, java.lang.Long.valueOf(v)) })
    m
  }

  /** Waits (bounded) until queued events are written/sent and flushes the Kafka producer. */
  def flush(timeoutMs: Long): Unit = Colline.get.foreach(_.drain(timeoutMs))
}
