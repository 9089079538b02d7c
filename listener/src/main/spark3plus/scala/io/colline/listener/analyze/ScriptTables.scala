package io.colline.listener.analyze

import scala.collection.mutable
import scala.util.Try

import org.apache.spark.sql.{SparkSession, SparkSessionExtensions}
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.analysis.{AnalysisContext, UnresolvedRelation}
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.catalyst.plans.logical.{InsertIntoStatement, LogicalPlan}
import org.apache.spark.sql.catalyst.rules.Rule

/**
 * The tables and views a request's statements create while the catalog is a user's metastore,
 * which the analyzer never writes to: kept for the request, as the statements declare them
 * (their columns, provider and partitioning, at the location the metastore would give a managed
 * table), so that the later statements read and write them as they do when the script runs.
 * Registrar fills it; Spark's analysis resolves its tables through a rule of its own (`inject`)
 * that runs after Spark's relation resolution and takes only the names Spark left unresolved: a
 * temporary view, a CTE or a table the metastore has comes first, as when the script runs.
 */
private[listener] final class ScriptTables {
  private val tables = mutable.LinkedHashMap.empty[TableIdentifier, CatalogTable]

  def get(id: TableIdentifier): Option[CatalogTable] = tables.get(Inference.norm(id))
  def put(t: CatalogTable): Unit = tables(Inference.norm(t.identifier)) = t
  def remove(id: TableIdentifier): Boolean = tables.remove(Inference.norm(id)).isDefined
  def isEmpty: Boolean = tables.isEmpty
}

private[listener] object ScriptTables {
  /** The script's tables of each session (a request's pass has a session of its own). */
  private val bySession = java.util.Collections.synchronizedMap(new java.util.WeakHashMap[SparkSession, ScriptTables])

  def attach(session: SparkSession, tables: ScriptTables): Unit = bySession.put(session, tables)
  def detach(session: SparkSession): Unit = bySession.remove(session)

  /** The analyzer's rule that resolves a script's tables (Server.session). */
  def inject(ext: SparkSessionExtensions): Unit = ext.injectResolutionRule(s => new Resolve(s))

  private final class Resolve(session: SparkSession) extends Rule[LogicalPlan] {
    override def apply(plan: LogicalPlan): LogicalPlan = Option(bySession.get(session)).filterNot(_.isEmpty) match {
      case None => plan
      case Some(tables) =>
        val catalog = session.sessionState.catalog
        // the name as Spark reads it where it stands: a view's text in the view's database
        def ident(parts: Seq[String]): Option[TableIdentifier] = parts.map(_.toLowerCase) match {
          case Seq(t) =>
            val db = AnalysisContext.get.catalogAndNamespace.map(_.toLowerCase) match {
              case Seq(Registrar.SessionCatalog, d) => d
              case _ => catalog.getCurrentDatabase.toLowerCase
            }
            Some(TableIdentifier(t, Some(db)))
          case Seq(db, _) if db == session.conf.get("spark.sql.globalTempDatabase", "global_temp").toLowerCase => None
          case Seq(db, t) => Some(TableIdentifier(t, Some(db)))
          case Seq(Registrar.SessionCatalog, db, t) => Some(TableIdentifier(t, Some(db)))
          case _ => None
        }
        def relation(u: UnresolvedRelation): Option[LogicalPlan] =
          if (u.isStreaming) None
          else ident(u.multipartIdentifier)
            .filterNot(id => Try(catalog.tableExists(id)).getOrElse(true)) // the metastore's own comes first
            .flatMap(tables.get)
            .map(t => catalog.getRelation(t))
        plan.resolveOperatorsUp {
          // an INSERT's target is not a child of it
          case i: InsertIntoStatement => i.table match {
            case u: UnresolvedRelation => relation(u).map(r => i.copy(table = r)).getOrElse(i)
            case _ => i
          }
          case u: UnresolvedRelation => relation(u).getOrElse(u)
        }
    }
  }
}
