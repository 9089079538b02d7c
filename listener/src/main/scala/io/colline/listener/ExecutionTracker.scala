package io.colline.listener

import scala.util.Try

import org.apache.spark.scheduler.{SparkListener, SparkListenerApplicationEnd, SparkListenerEvent, SparkListenerJobStart}
import org.apache.spark.sql.execution.ui.{SparkListenerSQLExecutionEnd, SparkListenerSQLExecutionStart}

/**
 * A SparkListener on the same (shared) listener-bus queue as Spark's ExecutionListenerBus. A
 * QueryExecutionListener is not told the SQL execution id, so this one maps `QueryExecution.id`
 * to the execution id and the root execution id, and marks nested writes: an execution that runs
 * while an execution of the same root whose physical plan is a write command
 * (SparkClasses.NestingWriteExecs) is still running
 * (`Execute CreateDataSourceTableAsSelectCommand` for the inner insert of a 3.4+ CTAS,
 * `Execute InsertIntoDataSourceDirCommand`, `Execute InsertIntoDataSourceCommand` around a JDBC
 * `SaveIntoDataSourceCommand`, `AtomicCreateTableAsSelect` around a v2 `AppendData`, ...); the
 * publisher does not publish those (Publisher.process: `droppedNested`). On a Spark Connect
 * server it also joins each execution to the Connect operation that ran it (its job tags, 3.5+,
 * and `SparkListenerConnectOperationStarted`: Connect.scala).
 * It also records the streaming query run an execution ran in (a write inside `foreachBatch`
 * runs on the query's thread, whose jobs carry its local properties: `sql.streaming.queryId`, the
 * run id as job group, `streaming.sql.batchId`), and drains the publisher at application end and
 * logs its report (Publisher.report).
 */
private[listener] final class ExecutionTracker(publisher: Publisher) extends SparkListener {
  /** executionId -> (rootExecutionId, physical root node name, Connect operation) of started, not yet ended executions */
  private val running = new Bounded[Long, (Long, String, Option[ConnectOperation])](10000)
  /** Connect operation job tag -> the operation as SparkListenerConnectOperationStarted told it */
  private val operations = new Bounded[String, ConnectOperation](10000)
  /** QueryExecution.id -> execution facts */
  private val byQe = new Bounded[Long, ExecInfo](10000)
  /**
   * executionId (and root execution id) -> the streaming micro-batch its jobs ran in. A
   * foreachBatch function runs inside the micro-batch's execution, so its writes are nested
   * executions of that root: one whose own jobs ran in executions nested in it (Delta's writes)
   * or that ran none (a temporary view) is found by its root.
   */
  private val batches = new Bounded[Long, StreamBatch](1000)
  private val rootBatches = new Bounded[Long, StreamBatch](1000)

  override def onJobStart(job: SparkListenerJobStart): Unit = try {
    StreamBatch.of(job.properties).foreach { b =>
      def id(key: String) = Option(job.properties.getProperty(key)).flatMap(x => Try(x.toLong).toOption)
      id(ExecutionTracker.ExecutionIdKey).foreach(batches.put(_, b))
      id(ExecutionTracker.RootExecutionIdKey).foreach(rootBatches.put(_, b))
    }
  } catch { case _: Throwable => }

  override def onOtherEvent(event: SparkListenerEvent): Unit = try {
    event match {
      case s: SparkListenerSQLExecutionStart =>
        val root = Try(Compat.rootExecutionId(s).getOrElse(s.executionId)).getOrElse(s.executionId)
        val name = Try(s.sparkPlanInfo.nodeName).toOption.flatMap(Option(_)).getOrElse("")
        val connect = Try(Connect.fromTags(Connect.jobTags(s))).toOption.flatten.map { case (tag, op) =>
          operations.get(tag).getOrElse(op)
        }
        running.put(s.executionId, (root, name, connect))
      case e: SparkListenerSQLExecutionEnd =>
        val mine = running.remove(e.executionId)
        val root = mine.map(_._1).getOrElse(e.executionId)
        val nested = root != e.executionId && running.values.exists { case (r, n, _) => r == root && SparkClasses.isNestingWriteExec(n) }
        Reflect.call(e, "qe").flatMap(qe => Reflect.call(qe, "id")).foreach {
          case id: java.lang.Long =>
            val batch = batches.remove(e.executionId).orElse(rootBatches.get(root))
            byQe.put(id.longValue(), ExecInfo(e.executionId, root, nested, batch, mine.flatMap(_._3)))
          case _ =>
        }
      case other => Connect.started(other).foreach { case (tag, op) => operations.put(tag, op) }
    }
  } catch { case _: Throwable => }

  override def onApplicationEnd(end: SparkListenerApplicationEnd): Unit =
    try {
      publisher.drain(publisher.cfg.shutdownTimeoutMs)
      publisher.reportEnd()
    } catch { case _: Throwable => }

  /**
   * The facts of a QueryExecution. The ExecutionListenerBus may run before this listener on the
   * same queue thread, so wait a little for the End event to be seen.
   */
  def lookup(qeId: Long): Option[ExecInfo] = {
    var r = byQe.remove(qeId)
    var waited = 0
    while (r.isEmpty && waited < 200) {
      Thread.sleep(5)
      waited += 5
      r = byQe.remove(qeId)
    }
    r
  }
}

private[listener] object ExecutionTracker {
  /** SQLExecution.EXECUTION_ID_KEY and EXECUTION_ROOT_ID_KEY (3.4+), a job's local properties */
  val ExecutionIdKey = "spark.sql.execution.id"
  val RootExecutionIdKey = "spark.sql.execution.root.id"
}

/**
 * A micro-batch of a streaming query run: the query id, its run id and the batch id, as the
 * query's thread sets them on every job it runs (StreamExecution: `sql.streaming.queryId` and the
 * run id as job group; MicroBatchExecution: `streaming.sql.batchId`; the same keys on 3.x and 4.x).
 */
private[listener] final case class StreamBatch(queryId: String, runId: String, batchId: Option[Long])

private[listener] object StreamBatch {
  val QueryIdKey = "sql.streaming.queryId"
  val RunIdKey = "spark.jobGroup.id"
  val BatchIdKey = "streaming.sql.batchId"

  def of(props: java.util.Properties): Option[StreamBatch] =
    if (props == null) None
    else Option(props.getProperty(QueryIdKey)).filter(_.nonEmpty).map { q =>
      StreamBatch(q, Option(props.getProperty(RunIdKey)).getOrElse(""),
        Option(props.getProperty(BatchIdKey)).flatMap(b => scala.util.Try(b.toLong).toOption))
    }
}

/** A small synchronized insertion-ordered map that forgets its eldest entries. */
private[listener] final class Bounded[K, V](max: Int) {
  private val m = new java.util.LinkedHashMap[K, V](16, 0.75f, false) {
    override def removeEldestEntry(e: java.util.Map.Entry[K, V]): Boolean = size() > max
  }
  def put(k: K, v: V): Unit = m.synchronized { m.put(k, v) }
  def remove(k: K): Option[V] = m.synchronized { Option(m.remove(k)) }
  def get(k: K): Option[V] = m.synchronized { Option(m.get(k)) }
  def entries: Seq[(K, V)] = m.synchronized {
    val b = Seq.newBuilder[(K, V)]
    val it = m.entrySet().iterator()
    while (it.hasNext) { val e = it.next(); b += (e.getKey -> e.getValue) }
    b.result()
  }
  def values: Seq[V] = m.synchronized {
    val b = Seq.newBuilder[V]
    val it = m.values().iterator()
    while (it.hasNext) b += it.next()
    b.result()
  }
}
