package io.colline.listener

import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.execution.QueryExecution
import org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart

/**
 * Spark 2.4: no root execution id (nested writes are not marked), no catalog in TableIdentifier,
 * no CommandResult (a command's result is not re-read as a query), no QueryExecution id (the SQL
 * execution end event carries no QueryExecution, so executions are not tracked: the event's
 * executionId is the QueryExecution's identity hash).
 */
private[listener] object Compat {
  def rootExecutionId(s: SparkListenerSQLExecutionStart): Option[Long] = None
  def tableCatalog(id: TableIdentifier): Option[String] = None
  def isCommandResult(qe: QueryExecution): Boolean = false
  def queryExecutionId(qe: QueryExecution): Long = System.identityHashCode(qe).toLong
  val tracksExecutions = false
  /** innerChildren is protected in 2.4: unknown nodes are described without their nested plans. */
  def innerChildren(p: org.apache.spark.sql.catalyst.plans.logical.LogicalPlan): Seq[Any] = Nil
}
