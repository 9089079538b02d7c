package io.colline.listener

import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.analysis.ResolvedDBObjectName
import org.apache.spark.sql.catalyst.plans.logical.{CommandResult, LogicalPlan, MergeAction, MergeIntoTable}
import org.apache.spark.sql.connector.catalog.{CatalogPlugin, Identifier}
import org.apache.spark.sql.execution.QueryExecution
import org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart

/**
 * Spark 3.3: no root execution id (nested writes are not marked), no catalog in TableIdentifier,
 * no ResolvedIdentifier (3.3 CTAS/DROP use other nodes), no NOT MATCHED BY SOURCE.
 */
private[listener] object Compat {
  def rootExecutionId(s: SparkListenerSQLExecutionStart): Option[Long] = None
  def tableCatalog(id: TableIdentifier): Option[String] = None
  /** A table of the session catalog, named as the catalog names its tables (with the catalog, 3.4+). */
  def sessionTable(table: String, db: String): TableIdentifier = TableIdentifier(table, Some(db))
  def notMatchedBySourceActions(m: MergeIntoTable): Seq[MergeAction] = Nil

  object ResolvedIdent {
    def unapply(p: LogicalPlan): Option[(CatalogPlugin, Identifier)] = None
  }

  /** The name parts of a `ResolvedDBObjectName`: what 3.3 resolves a CREATE DATABASE's name to. */
  object ResolvedDBObject {
    def unapply(p: LogicalPlan): Option[Seq[String]] = p match {
      case ResolvedDBObjectName(_, parts) => Some(parts)
      case _ => None
    }
  }

  /** A re-read of a command's result (commandExecuted is computed for a successful execution: free). */
  def isCommandResult(qe: QueryExecution): Boolean = qe.commandExecuted.isInstanceOf[CommandResult]
  def queryExecutionId(qe: QueryExecution): Long = qe.id
  val tracksExecutions = true
  def innerChildren(p: LogicalPlan): Seq[Any] = p.innerChildren
  /** The analyzer has qualified every name already (2.4's does not: src/main/spark24). */
  def qualify(p: LogicalPlan, session: org.apache.spark.sql.SparkSession): LogicalPlan = p
}
