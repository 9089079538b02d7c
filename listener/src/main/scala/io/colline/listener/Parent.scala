package io.colline.listener

import scala.util.Try

/**
 * The run of a scheduler (Airflow, DolphinScheduler, an in-house one) that launched this Spark
 * application or session: its job's namespace and name and its run id, and the root run above it
 * (an Airflow DAG run above its task). Read from the session's configuration, so a Spark Connect
 * client sets it per session (`spark.conf.set`), and a `spark-submit --conf` per application.
 */
private[listener] final case class ParentRun(namespace: String, name: String, runId: String, root: Option[ParentRun] = None) {

  /** The event's `parent` (docs/event-format.md). */
  def json: J.Obj = {
    val o = J.obj("namespace" -> J.Str(namespace), "name" -> J.Str(name), "runId" -> J.Str(runId))
    root.foreach(r => o.put("root", r.json))
    o
  }
}

private[listener] object ParentRun {
  /** The longest value kept of each key. */
  val MaxLength = 256

  /** colline's own keys (listener/README.md), namespace, job name and run id, which win over OpenLineage's. */
  val Colline: Seq[String] = Seq("parent.namespace", "parent.job", "parent.runId").map(Config.Prefix + _)
  val CollineRoot: Seq[String] = Seq("parent.root.namespace", "parent.root.job", "parent.root.runId").map(Config.Prefix + _)
  /** OpenLineage's keys, as Airflow's OpenLineage provider passes them to Spark. */
  val OpenLineage: Seq[String] =
    Seq("parentJobNamespace", "parentJobName", "parentRunId").map("spark.openlineage." + _)
  val OpenLineageRoot: Seq[String] =
    Seq("rootParentJobNamespace", "rootParentJobName", "rootParentRunId").map("spark.openlineage." + _)
  val Keys: Seq[String] = Colline ++ CollineRoot ++ OpenLineage ++ OpenLineageRoot

  /**
   * The parent run the settings name: colline's keys when any of them is set, else OpenLineage's;
   * a run whose namespace, name or run id is missing is no parent (`problems` says which key is
   * missing). The root run comes from the same family of keys.
   */
  def from(get: String => Option[String], problem: String => Unit = _ => ()): Option[ParentRun] = {
    def value(k: String) = Try(get(k)).toOption.flatten.map(_.trim).filter(_.nonEmpty)
      .map(v => if (v.length <= MaxLength) v else v.substring(0, MaxLength))
    def run(keys: Seq[String]): Option[ParentRun] = keys.map(value) match {
      case Seq(Some(ns), Some(name), Some(id)) => Some(ParentRun(ns, name, id))
      case vs if vs.exists(_.isDefined) =>
        problem(s"incomplete parent run: ${keys.zip(vs).collect { case (k, None) => k }.mkString(", ")} not set " +
          s"(with ${keys.zip(vs).collect { case (k, Some(_)) => k }.mkString(", ")}): no parent recorded")
        None
      case _ => None
    }
    val (own, root) = if ((Colline ++ CollineRoot).exists(k => value(k).isDefined)) (Colline, CollineRoot) else (OpenLineage, OpenLineageRoot)
    run(own).map(p => p.copy(root = run(root).filter(_.runId != p.runId)))
  }
}
