package io.colline.listener

import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, MergeAction, MergeIntoTable}
import org.apache.spark.sql.connector.catalog.{CatalogPlugin, Identifier}
import org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart

/**
 * Spark 3.3: no root execution id (nested writes are not marked), no catalog in TableIdentifier,
 * no ResolvedIdentifier (3.3 CTAS/DROP use other nodes), no NOT MATCHED BY SOURCE.
 */
private[listener] object Compat {
  def rootExecutionId(s: SparkListenerSQLExecutionStart): Option[Long] = None
  def tableCatalog(id: TableIdentifier): Option[String] = None
  def notMatchedBySourceActions(m: MergeIntoTable): Seq[MergeAction] = Nil

  object ResolvedIdent {
    def unapply(p: LogicalPlan): Option[(CatalogPlugin, Identifier)] = None
  }
}
