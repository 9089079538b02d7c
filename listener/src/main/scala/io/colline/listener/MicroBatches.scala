package io.colline.listener

import scala.util.Try

import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.LogicalRDD

/**
 * The `foreachBatch` streaming query runs of this JVM, so that the writes a `foreachBatch`
 * function makes say what their micro-batch DataFrame stands for.
 *
 * Spark's ForeachBatchSink hands the function a DataFrame over a `LogicalRDD` whose output is the
 * micro-batch plan's output (`LogicalRDD.fromDataset`), which is the streaming query's output
 * (MicroBatchExecution replaces the sources of the query's analyzed plan and keeps its
 * attributes). So a `LogicalRDD` whose output attributes are a run's output attributes stands for
 * that run's input plan: its streaming sources and their columns. The event of such a write
 * carries that plan (`plans.microBatch` of the `LogicalRDD`) and the run (`query.stream`).
 *
 * Runs are remembered when the streaming listener sees them start (Streaming.scala), or found
 * among the active queries when a write names one that was not seen; the map is bounded.
 */
private[listener] object MicroBatches {
  /** A run of a streaming query with a `foreachBatch` sink, and the query's input plan. */
  final case class Run(queryId: String, runId: String, name: Option[String], input: LogicalPlan, exprIds: Set[Long]) {
    def covers(ids: Seq[Long]): Boolean = ids.nonEmpty && ids.forall(exprIds)
  }

  private val runs = new Bounded[String, Run](1000)

  def remember(r: Run): Unit = runs.put(r.runId, r)

  def run(queryId: String, runId: String, name: Option[String], input: LogicalPlan): Option[Run] =
    Try(Run(queryId, runId, name, input, input.output.map(_.exprId.id).toSet)).toOption

  /** The run of a run id; the active queries are searched once when it is unknown. */
  def byRun(runId: String): Option[Run] =
    runs.get(runId).orElse { Streaming.discover(); runs.get(runId) }

  /** The newest run whose output holds every one of ids. */
  def covering(ids: Seq[Long]): Option[Run] = {
    def find = runs.values.reverseIterator.find(_.covers(ids))
    find.orElse { Streaming.discover(); find }
  }
}

/**
 * What one batch event knows of the micro-batch it ran in: the run the execution's jobs named
 * (ExecutionTracker), and the `LogicalRDD` leaves that stand for that run's micro-batch.
 */
private[listener] final class MicroBatchBinding(exec: Option[StreamBatch]) {
  private var found: Option[MicroBatches.Run] = None

  /** The input plan a leaf stands for, when it is a micro-batch of a `foreachBatch` run. */
  def plan(leaf: LogicalPlan): Option[LogicalPlan] = leaf match {
    case r: LogicalRDD =>
      val ids = Try(r.output.map(_.exprId.id)).getOrElse(Nil)
      val run = exec match {
        case Some(b) => MicroBatches.byRun(b.runId).filter(_.covers(ids))
        case None => MicroBatches.covering(ids)
      }
      run.foreach(x => if (found.isEmpty) found = Some(x))
      run.map(_.input)
    case _ => None
  }

  /** `query.stream` of the event: the run the execution ran in, or whose micro-batch it read. */
  def json: Option[J.Obj] = {
    val named = found.orElse(exec.flatMap(b => MicroBatches.byRun(b.runId)))
    val (id, runId) = exec.map(b => (b.queryId, b.runId)).orElse(found.map(r => (r.queryId, r.runId))).getOrElse((null, null))
    if (id == null) None
    else Some(J.obj(
      "id" -> J.Str(id),
      "runId" -> J.Str(Option(runId).getOrElse("")),
      "name" -> J.opt(named.flatMap(_.name)),
      "batchId" -> exec.flatMap(_.batchId).map(b => J.Num(b): J).getOrElse(J.Null)))
  }
}
