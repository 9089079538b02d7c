package io.colline.listener

import scala.util.Try

import org.apache.spark.{SparkConf, SparkEnv}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.streaming.StreamingQueryListener
import org.apache.spark.sql.streaming.StreamingQueryListener.{QueryProgressEvent, QueryStartedEvent, QueryTerminatedEvent}

/**
 * colline's StreamingQueryListener: publishes the plan of every streaming query run once (at its
 * first progress, or at its end if it never made progress), in the event format, with
 * `query.funcName = "stream"`. Register it with
 * `spark.sql.streaming.streamingQueryListeners=io.colline.listener.CollineStreamingListener`;
 * the CollineListener also registers one on every session it sees (one event per run either way).
 *
 * The plan is the query's `WriteToStream` (sink, output mode, the analyzed input query with its
 * `StreamingRelation`/`StreamingRelationV2` sources); the listener adds the identities Spark's
 * nodes do not carry: `write` on the root, `dataset` on the streaming sources.
 */
class CollineStreamingListener private[listener] (fixedSession: Option[SparkSession], conf: SparkConf)
    extends StreamingQueryListener {

  def this(conf: SparkConf) = this(None, conf)
  def this() = this(None, Option(SparkEnv.get).map(_.conf).getOrElse(new SparkConf()))

  private lazy val publisher: Option[Publisher] = try {
    val cfg = Config.from(conf)
    if (cfg.enabled && cfg.streaming) Some(Colline.publisher(cfg)) else None
  } catch {
    case t: Throwable =>
      WarnOnce("the streaming listener failed to start and is off (no streaming lineage is published)", t)
      None
  }

  // Spark calls onQueryStarted synchronously on the query's thread, while the query is active:
  // take references only. Progress and termination are fallbacks (asynchronous: the query may be gone).
  override def onQueryStarted(event: QueryStartedEvent): Unit = try {
    capture(event.id, event.runId)
  } catch { case _: Throwable => }

  override def onQueryProgress(event: QueryProgressEvent): Unit = try {
    capture(event.progress.id, event.progress.runId)
  } catch { case _: Throwable => }

  override def onQueryTerminated(event: QueryTerminatedEvent): Unit = try {
    capture(event.id, event.runId)
  } catch { case _: Throwable => }

  /** On the listener bus: snapshot references only, the event is built on the publisher thread. */
  private def capture(id: java.util.UUID, runId: java.util.UUID): Unit = {
    val pub = fixedSession.flatMap(_ => Colline.get).orElse(publisher).orNull
    if (pub == null || !Streaming.firstOfRun(runId)) return
    try {
      Faults.maybeThrow(pub.cfg, "stream")
      val sessions = fixedSession.toSeq ++ SparkSession.getActiveSession.toSeq ++ SparkSession.getDefaultSession.toSeq
      val query = sessions.iterator.map(s => Try(s.streams.get(id)).getOrElse(null)).find(_ != null)
      val exec = query.flatMap(q => Reflect.call(q, "streamingQuery")).getOrElse(query.orNull)
      val plan = Reflect.field(exec, "plan").collect { case p: LogicalPlan => p }
        .orElse(Reflect.plan(exec, "analyzedPlan"))
      plan match {
        case None => Streaming.forget(runId) // ended before we could see it, or not a stream we know
        case Some(p) =>
          Streaming.remember(id, runId, exec, p)
          val session = sessions.headOption.orNull
          val sc = Option(session).map(_.sparkContext)
          val task = new Runnable {
            def run(): Unit = Streaming.publish(pub, session, exec, p, id, runId,
              sc.map(_.applicationId).orNull, sc.map(_.appName).orNull, sc.map(_.sparkUser).orNull)
          }
          pub.offer(task)
      }
    } catch {
      case t: Throwable =>
        Try(pub.metrics.internalErrors.incrementAndGet())
        Try(pub.log.warn("stream", "failed to capture a streaming query", t))
    }
  }
}

private[listener] object Streaming {
  /** Streaming events are a 1.2 addition (docs/event-format.md); they carry the current version. */
  val SchemaVersion: String = EventBuilder.SchemaVersion
  private val seen = new Bounded[java.util.UUID, java.lang.Boolean](10000)
  private val sessions = java.util.Collections.synchronizedMap(new java.util.WeakHashMap[AnyRef, java.lang.Boolean]())

  def firstOfRun(runId: java.util.UUID): Boolean = seen.synchronized {
    if (seen.remove(runId).isDefined) { seen.put(runId, true); false } else { seen.put(runId, true); true }
  }
  def forget(runId: java.util.UUID): Unit = seen.remove(runId)

  /**
   * Remembers a run with a `foreachBatch` sink (MicroBatches): its writes read its micro-batches.
   * Called on the query's thread at its start: references and the output's exprIds only.
   */
  def remember(id: java.util.UUID, runId: java.util.UUID, exec: AnyRef, plan: LogicalPlan): Unit = Try {
    val sink = Reflect.call(plan, "sink").orNull
    if (sink != null && sink.getClass.getName.endsWith(SparkClasses.ForeachBatchSink))
      plan.children.headOption.flatMap(in => MicroBatches.run(id.toString, runId.toString, Reflect.string(exec, "name"), in))
        .foreach(MicroBatches.remember)
  }

  /**
   * Remembers the `foreachBatch` runs among the active queries of the default session: for a
   * write of a run whose start was not seen (the streaming listener was registered after it).
   */
  def discover(): Unit = Try {
    SparkSession.getDefaultSession.foreach(_.streams.active.foreach { q =>
      val exec = Reflect.call(q, "streamingQuery").getOrElse(q)
      Reflect.field(exec, "plan").collect { case p: LogicalPlan => p }
        .foreach(p => remember(q.id, q.runId, exec, p))
    })
  }

  /** Registers a streaming listener on a session, once (called from the QueryExecutionListener). */
  def register(session: SparkSession, pub: Publisher): Unit =
    if (session != null && sessions.put(session, true) == null) {
      Try(session.streams.addListener(new CollineStreamingListener(Some(session), new SparkConf(false))))
    }

  /** On the publisher thread: builds the event of one streaming query run and publishes it. */
  def publish(pub: Publisher, session: SparkSession, exec: AnyRef, plan: LogicalPlan, id: java.util.UUID,
      runId: java.util.UUID, appId: String, appName: String, user: String): Unit = {
    val p = Pending(funcName = "stream", plan = plan, qeId = 0L, success = true, error = None,
      durationNs = None, endedAtMs = System.currentTimeMillis(), appId = appId, appName = appName, user = user,
      redaction = Try(session.sessionState.conf.stringRedactionPattern).toOption.flatten,
      parent = ParentRun.from(k => session.conf.getOption(k), WarnOnce(_)))
    EventBuilder.build(p, None, pub.cfg) match {
      case Event(json, executionId, rootClass) =>
        // the sources' datasets are the leaves' (Versioned.Leaf, sourceDataset); the sink is the root's
        json.get("nodes").collect { case a: J.Arr => a.items.headOption }.flatten.foreach {
          case o: J.Obj if Nodes.shortName(plan) == SparkClasses.WriteToStream =>
            o.put("write", sinkWrite(session, plan, exec, extraOptions(exec), o))
          case _ =>
        }
        // one event per run: its id is the run's, so that the writes of its micro-batches name
        // their parent run (query.stream.runId) without knowing this event
        json.put("eventId", runId.toString)
        json.get("query").foreach {
          case q: J.Obj => q.put("stream", J.obj("id" -> J.Str(id.toString), "runId" -> J.Str(runId.toString),
            "name" -> J.opt(Reflect.string(exec, "name"))))
          case _ =>
        }
        json.put("schemaVersion", Streaming.SchemaVersion)
        pub.metrics.streamsPublished.incrementAndGet()
        pub.publish(json, executionId, rootClass, appId)
      case Skipped(_) => pub.metrics.droppedNoLineage.incrementAndGet()
    }
  }

  private def extraOptions(exec: AnyRef): String => Option[String] =
    Reflect.field(exec, "extraOptions").flatMap(Reflect.stringMap).getOrElse((_: String) => None)

  private def qualify(session: SparkSession, path: String): String = Try {
    val p = new org.apache.hadoop.fs.Path(path)
    p.getFileSystem(session.sessionState.newHadoopConf()).makeQualified(p).toString
  }.getOrElse(path)

  private def activeSession: SparkSession =
    SparkSession.getActiveSession.orElse(SparkSession.getDefaultSession).orNull

  /** `write` of the root `WriteToStream`: the sink's identity, mode `stream`, the input's columns. */
  private def sinkWrite(session: SparkSession, root: LogicalPlan, exec: AnyRef,
      opts: String => Option[String], node: J.Obj): J.Obj = {
    val sink = Reflect.call(root, "sink").orNull
    val sinkClass = if (sink == null) "" else sink.getClass.getName
    val catalogTable = Reflect.call(root, "catalogTable").collect { case Some(ct: CatalogTable) => ct }
    val catalogAndIdent = Reflect.call(root, "catalogAndIdent").collect { case Some((c: AnyRef, i: AnyRef)) => (c, i) }
    val foreachBatch = sinkClass.endsWith(SparkClasses.ForeachBatchSink)
    val ds: J.Obj = catalogTable.map(ct => Nodes.tableDataset(ct))
      .orElse(catalogAndIdent.map { case (c, i) =>
        J.obj("kind" -> J.Str("table"), "catalog" -> J.opt(Reflect.string(c, "name")),
          "namespace" -> J.strs(Reflect.call(i, "namespace").collect { case a: Array[String] => a.toSeq }.getOrElse(Nil)),
          "name" -> J.opt(Reflect.string(i, "name")))
      })
      .getOrElse {
        if (sinkClass.endsWith(SparkClasses.FileStreamSink))
          Nodes.pathDataset(Reflect.field(sink, "fileFormat").map(Nodes.formatName).orNull,
            Reflect.field(sink, "path").map(p => qualify(session, String.valueOf(p))).toSeq)
        else if (SparkClasses.isKafka(sinkClass))
          Nodes.kafkaDataset(opts("kafka.bootstrap.servers"), opts("topic").toSeq, None)
        else if (foreachBatch) Nodes.other("foreachBatch")
        else Nodes.other(Try(sink.asInstanceOf[org.apache.spark.sql.connector.catalog.Table].name()).getOrElse(sinkClass))
      }
    val args = node.get("args").collect { case a: J.Obj => a }.getOrElse { val a = new J.Obj; node.put("args", a); a }
    Reflect.call(root, "outputMode").foreach(m => args.put("outputMode", J.Str(String.valueOf(m))))
    args.put("foreachBatch", J.Bool(foreachBatch))
    val cols = Try(root.children.head.output.map(_.name)).getOrElse(Nil)
    J.obj("dataset" -> ds, "mode" -> J.Str("stream"), "columns" -> J.strs(cols),
      "partitionColumns" -> J.strs(Reflect.field(sink, "partitionColumnNames").collect {
        case s: Seq[_] => s.map(String.valueOf) }.getOrElse(Nil)),
      "query" -> J.Num(1))
  }

  /**
   * Identity of a streaming source (a StreamingRelation or StreamingRelationV2 leaf, in a stream
   * event or in the micro-batch plan of a foreachBatch write): files, Kafka, a catalog table, or
   * what Spark names it.
   */
  def sourceDataset(leaf: LogicalPlan): Option[J.Obj] = Try {
    val session = activeSession
    val sourceName = Reflect.string(leaf, "sourceName").getOrElse("")
    val dataSource = Reflect.call(leaf, "dataSource") // v1 StreamingRelation
    val opts: String => Option[String] = dataSource.flatMap(d => Reflect.call(d, "options")).flatMap(Reflect.stringMap)
      .orElse(Reflect.call(leaf, "extraOptions").collect { case m: java.util.Map[_, _] =>
        (k: String) => Try(Option(m.asInstanceOf[java.util.Map[String, String]].get(k))).toOption.flatten })
      .getOrElse((_: String) => None)
    val catalog = Reflect.call(leaf, "catalog").collect { case Some(c: AnyRef) => c }
    val ident = Reflect.call(leaf, "identifier").collect { case Some(i: AnyRef) => i }
    if (sourceName == "kafka" || opts("kafka.bootstrap.servers").isDefined) {
      val topics = opts("subscribe").map(_.split(",").map(_.trim).filter(_.nonEmpty).toSeq)
        .orElse(opts("assign").map(KafkaClasses.assignTopics)).getOrElse(Nil)
      Nodes.kafkaDataset(opts("kafka.bootstrap.servers"), topics, opts("subscribepattern"))
    } else if (catalog.isDefined && ident.isDefined) {
      J.obj("kind" -> J.Str("table"), "catalog" -> J.opt(Reflect.string(catalog.get, "name")),
        "namespace" -> J.strs(Reflect.call(ident.get, "namespace").collect { case a: Array[String] => a.toSeq }.getOrElse(Nil)),
        "name" -> J.opt(Reflect.string(ident.get, "name")))
    } else {
      val paths = dataSource.map(d => Reflect.strings(d, "paths")).getOrElse(Nil) ++ opts("path").toSeq
      if (paths.nonEmpty) Nodes.pathDataset(dataSource.flatMap(d => Reflect.string(d, "className")).map(shortFormat)
        .getOrElse(sourceName), paths.distinct.map(qualify(session, _)))
      else Nodes.other(sourceName)
    }
  }.toOption

  private def shortFormat(className: String): String =
    if (className.contains('.')) className.substring(className.lastIndexOf('.') + 1) else className
}
