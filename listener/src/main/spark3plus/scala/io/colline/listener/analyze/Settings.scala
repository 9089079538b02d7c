package io.colline.listener.analyze

import scala.util.Try

import org.apache.spark.sql.SparkSession

/**
 * The Spark settings of an analysis. A request changes only its own session (`conf` of the
 * request, `SET`, `RESET`), which ends with the request. It may change a setting that Spark
 * registers as a runtime SQL setting (`RuntimeConfig.isModifiable`) and that is not one of
 * `Denied`: the settings that would make analysis read files, reach another catalog, load a
 * class or weaken redaction. `Locked` settings hold in every session, whatever a request or the
 * operator's `-D` says. Keys Spark does not register (Hadoop and Hive keys, which reach the
 * session's Hadoop configuration) are refused, but for `ExtraAllowed`.
 */
private[listener] object Settings {
  /** Set on every session and never changed. */
  val Locked: Map[String, String] = Map(
    "spark.sql.runSQLOnFiles" -> "false", // no `csv.`/path``: a path query would read the files
    "spark.sql.hive.caseSensitiveInferenceMode" -> "NEVER_INFER", // no reading of Parquet/ORC footers, no schema saved to a metastore
    "spark.sql.statistics.fallBackToHdfs" -> "false") // no listing of a table's files for its size

  /** Registered settings a request may not change, by prefix, and why. */
  val Denied: Seq[(String, String)] = Seq(
    "spark.sql.catalog." -> "it would configure a catalog, whose class Spark loads and which may connect anywhere",
    "spark.sql.defaultCatalog" -> "it would switch to another catalog than the analyzer's own",
    "spark.sql.redaction." -> "it would weaken the redaction of the events",
    "spark.sql.scripting." -> "SQL scripts run their statements",
    "spark.sql.artifact." -> "artifacts are files and classes") ++ Locked.keys.map(_ -> "the analyzer locks it")

  /** Unregistered keys a request may set (Hive's, which Spark's analysis of Hive inserts reads). */
  val ExtraAllowed: Set[String] = Set("hive.exec.dynamic.partition", "hive.exec.dynamic.partition.mode")

  /** None when a request may set `key`, else why not. */
  def refusal(session: SparkSession, key: String): Option[String] = {
    val k = key.trim
    Denied.collectFirst { case (p, why) if k == p || (p.endsWith(".") && k.startsWith(p)) => s"$k: not changed ($why)" }
      .orElse {
        if (ExtraAllowed(k)) None
        else if (Try(session.conf.isModifiable(k)).getOrElse(false)) None
        else Some(s"$k: not a Spark SQL setting a request may change (only runtime SQL settings Spark registers, and ${ExtraAllowed.toSeq.sorted.mkString(", ")})")
      }
  }

  def lock(session: SparkSession): Unit = Locked.foreach { case (k, v) => session.conf.set(k, v) }

  /** Applies `SET key=value` to the request's session, or says why not. */
  def set(session: SparkSession, key: String, value: String): Applying = refusal(session, key) match {
    case Some(why) => NotApplied(why)
    case None =>
      try { session.conf.set(key.trim, value); Applied() } catch {
        case e: IllegalArgumentException => NotApplied(s"${key.trim}: " + Analyzer.head(String.valueOf(e.getMessage)))
      }
  }

  /** `RESET [key]`: back to what the request's session started with (the request's own `conf` included). */
  def reset(session: SparkSession, key: Option[String], initial: Map[String, String]): Applying = key match {
    case Some(k) =>
      refusal(session, k) match {
        case Some(why) => NotApplied(why)
        case None =>
          initial.get(k.trim) match {
            case Some(v) => session.conf.set(k.trim, v)
            case None => session.conf.unset(k.trim)
          }
          Applied()
      }
    case None =>
      session.conf.getAll.keys.filter(k => refusal(session, k).isEmpty && !initial.contains(k)).foreach(session.conf.unset)
      initial.foreach { case (k, v) => if (refusal(session, k).isEmpty) session.conf.set(k, v) }
      Applied()
  }
}
