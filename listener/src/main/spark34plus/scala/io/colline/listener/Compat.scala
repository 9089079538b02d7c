package io.colline.listener

import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.analysis.ResolvedIdentifier
import org.apache.spark.sql.catalyst.plans.logical.{CommandResult, LogicalPlan, MergeAction, MergeIntoTable}
import org.apache.spark.sql.connector.catalog.{CatalogPlugin, Identifier}
import org.apache.spark.sql.execution.QueryExecution
import org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart

/** Spark 3.4+ APIs that Spark 3.3 lacks (the 3.3 twin is in src/main/spark33). */
private[listener] object Compat {
  def rootExecutionId(s: SparkListenerSQLExecutionStart): Option[Long] = s.rootExecutionId
  def tableCatalog(id: TableIdentifier): Option[String] = id.catalog
  /** A table of the session catalog, named as the catalog names its tables (with the catalog, 3.4+). */
  def sessionTable(table: String, db: String): TableIdentifier = TableIdentifier(table, Some(db), Some("spark_catalog"))
  def notMatchedBySourceActions(m: MergeIntoTable): Seq[MergeAction] = m.notMatchedBySourceActions

  /** `ResolvedIdentifier(catalog, identifier)` (3.4+). */
  object ResolvedIdent {
    def unapply(p: LogicalPlan): Option[(CatalogPlugin, Identifier)] = p match {
      case ResolvedIdentifier(c, i) => Some((c, i))
      case _ => None
    }
  }

  /** 3.3's `ResolvedDBObjectName`: 3.4+ resolves a CREATE DATABASE's name to a ResolvedNamespace. */
  object ResolvedDBObject {
    def unapply(p: LogicalPlan): Option[Seq[String]] = None
  }

  /** A re-read of a command's result (commandExecuted is computed for a successful execution: free). */
  def isCommandResult(qe: QueryExecution): Boolean = qe.commandExecuted.isInstanceOf[CommandResult]
  def queryExecutionId(qe: QueryExecution): Long = qe.id
  val tracksExecutions = true
  def innerChildren(p: LogicalPlan): Seq[Any] = p.innerChildren
  /** The analyzer has qualified every name already (2.4's does not: src/main/spark24). */
  def qualify(p: LogicalPlan, session: org.apache.spark.sql.SparkSession): LogicalPlan = p
}
