package io.colline.listener

import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/** Spark 2.4 has no row-level commands (ReplaceData, WriteDelta, MergeRows) and no metadata columns. */
private[listener] object RowLevel {
  def isMetadataColumn(a: Attribute): Boolean = false

  object Described {
    def unapply(p: LogicalPlan): Option[NodeInfo] = None
  }
}
