package io.colline.listener

import scala.util.Try

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.QueryExecution
import org.apache.spark.sql.execution.command.{AlterTableRenameCommand, CreateDataSourceTableAsSelectCommand, CreateViewCommand, DropTableCommand, LoadDataCommand, PersistedView, TruncateTableCommand}
import org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart

/**
 * Spark 2.4: no root execution id (nested writes are not marked), no catalog in TableIdentifier,
 * no CommandResult (a command's result is not re-read as a query), no QueryExecution id (the SQL
 * execution end event carries no QueryExecution, so executions are not tracked: the event's
 * executionId is the QueryExecution's identity hash); DDL commands keep the names as written (3.x
 * qualifies them in the analyzer), so `qualify` does, on the listener bus right after the command.
 */
private[listener] object Compat {
  def rootExecutionId(s: SparkListenerSQLExecutionStart): Option[Long] = None
  def tableCatalog(id: TableIdentifier): Option[String] = None
  def isCommandResult(qe: QueryExecution): Boolean = false
  def queryExecutionId(qe: QueryExecution): Long = System.identityHashCode(qe).toLong
  val tracksExecutions = false
  /** innerChildren is protected in 2.4: unknown nodes are described without their nested plans. */
  def innerChildren(p: org.apache.spark.sql.catalyst.plans.logical.LogicalPlan): Seq[Any] = Nil

  /**
   * The DDL commands, data source CTAS and persistent views of 2.4 name tables as written (a Hive
   * CTAS is qualified by 2.4's analyzer), and CREATE VIEW keeps its query unanalyzed: an
   * unqualified name is of
   * the session's current database (taken right after the command ran), except a temporary view's
   * (DROP VIEW of an unqualified name, a rename to a temporary view's name), which stays
   * unqualified and is not published.
   */
  def qualify(p: LogicalPlan, session: SparkSession): LogicalPlan = Try {
    val catalog = session.sessionState.catalog
    def q(id: TableIdentifier) = if (id.database.isDefined) id else id.copy(database = Some(catalog.getCurrentDatabase))
    p match {
      case c: DropTableCommand if c.tableName.database.isEmpty && !c.isView => c.copy(tableName = q(c.tableName))
      case c: AlterTableRenameCommand if c.oldName.database.isEmpty && !catalog.isTemporaryTable(c.newName) =>
        c.copy(oldName = q(c.oldName), newName = q(c.newName))
      case c: TruncateTableCommand if c.tableName.database.isEmpty => c.copy(tableName = q(c.tableName))
      case c: LoadDataCommand if c.table.database.isEmpty => c.copy(table = q(c.table))
      case c: CreateViewCommand =>
        // 2.4 keeps the view's query as parsed (it analyzes it when the command runs): analyze it
        // again, now that the view exists, for the attributes and types of its lineage
        val child = Try(session.sessionState.executePlan(c.child).analyzed).getOrElse(c.child)
        c.copy(name = if (c.viewType == PersistedView) q(c.name) else c.name, child = child)
      case c: CreateDataSourceTableAsSelectCommand if c.table.identifier.database.isEmpty =>
        c.copy(table = c.table.copy(identifier = q(c.table.identifier)))
      case other => other
    }
  }.getOrElse(p)
}
