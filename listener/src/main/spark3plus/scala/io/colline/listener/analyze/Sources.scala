package io.colline.listener.analyze

import scala.collection.mutable
import scala.util.Try

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.catalog.{HiveTableRelation, TemporaryViewRelation}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.datasources.LogicalRelation

import io.colline.listener.J

/**
 * Where each table of a request got its schema, for the answer: `ddl` (the analyzer's `--ddl`
 * baseline, or the request's schema statements), `metastore` (a user's metastore), `graph` or
 * another source the caller named for the request's `tables`, `script` (an earlier statement of
 * the files: CREATE TABLE, a CTAS, a view), `inferred` (Inference), `view` (a temporary view);
 * `unknown` for a table nothing defines. Precedence follows from the order things are defined:
 * what the catalog has is never replaced by what the graph or an inference would give.
 */
private[listener] final class Sources(session: SparkSession, baseline: String) {
  import Sources._

  private val catalog = session.sessionState.catalog
  private val sources = mutable.Map.empty[TableIdentifier, String]

  def set(id: TableIdentifier, source: String): Unit = sources(Inference.norm(qualified(id))) = source

  /** Records the table or view a statement defined (a temporary view is a view of the session, not a table). */
  def defined(parsed: LogicalPlan, source: String): Unit = Relations.defined(parsed).foreach {
    case (_, true) =>
    case (parts, false) => ident(parts).foreach(set(_, source))
  }

  /** The tables a statement names, each with where its schema came from. */
  def of(parsed: LogicalPlan, inference: Option[Inference]): J.Arr = {
    val ctes = Relations.cteNames(parsed)
    J.arr(Relations.refs(parsed).filterNot(r => r.parts.size == 1 && ctes(r.parts.head.toLowerCase)).map { r =>
      ident(r.parts) match {
        case None => J.obj("table" -> J.Str(r.parts.mkString(".")), "source" -> J.Str(View))
        case Some(id) =>
          val source = sources.getOrElse(id,
            if (inference.exists(_.inferred(id))) Inferred else if (Try(catalog.tableExists(id)).getOrElse(false)) baseline else Unknown)
          Analyzer.tableJson(id).put("source", source)
      }
    }.distinct)
  }

  /**
   * The table-level lineage of a statement that is not analyzed: the tables it reads (a temporary
   * view's own tables) and those it writes or creates.
   */
  def tableLevel(parsed: LogicalPlan): (Seq[TableIdentifier], Seq[TableIdentifier]) = {
    val ctes = Relations.cteNames(parsed)
    val refs = Relations.refs(parsed).filterNot(r => r.parts.size == 1 && ctes(r.parts.head.toLowerCase))
    val reads = refs.filterNot(_.written).flatMap { r =>
      if (r.parts.size == 1) catalog.getRawTempView(r.parts.head) match {
        case Some(v: TemporaryViewRelation) => v.plan.toSeq.flatMap(tablesOf)
        case Some(p: LogicalPlan) => tablesOf(p)
        case None => ident(r.parts).toSeq
      } else ident(r.parts).toSeq
    }
    val writes = refs.filter(_.written).flatMap(r => ident(r.parts)) ++
      Relations.defined(parsed).collect { case (parts, false) => parts }.flatMap(ident)
    (reads.distinct, writes.distinct)
  }

  /** A name as the session reads it: a table of the session catalog (None for a temporary view, or another catalog's table). */
  private def ident(parts: Seq[String]): Option[TableIdentifier] = parts.map(_.toLowerCase) match {
    case Seq(t) if catalog.getRawTempView(t).isDefined => None
    case Seq(t) => Some(TableIdentifier(t, Some(catalog.getCurrentDatabase.toLowerCase)))
    case Seq("global_temp", _) => None
    case Seq(db, t) => Some(TableIdentifier(t, Some(db)))
    case Seq(Registrar.SessionCatalog, db, t) => Some(TableIdentifier(t, Some(db)))
    case _ => None
  }

  private def qualified(id: TableIdentifier): TableIdentifier =
    if (id.database.isDefined) id else TableIdentifier(id.table, Some(catalog.getCurrentDatabase))
}

private[listener] object Sources {
  val DDL = "ddl"
  val Metastore = "metastore"
  val Script = "script"
  val Inferred = "inferred"
  val View = "view"
  val Given = "given"
  val Unknown = "unknown"

  /** The catalog tables an analyzed plan reads. */
  def tablesOf(p: LogicalPlan): Seq[TableIdentifier] = p.collect {
    case l: LogicalRelation if l.catalogTable.isDefined => Inference.norm(l.catalogTable.get.identifier)
    case h: HiveTableRelation => Inference.norm(h.tableMeta.identifier)
  }.distinct
}
