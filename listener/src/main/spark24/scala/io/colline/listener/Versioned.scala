package io.colline.listener

import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.execution.command.{CreateViewCommand, PersistedView}

import Nodes._

/**
 * The plan nodes of Spark 2.4 whose shape differs from 3.x (src/main/spark3plus has those):
 * `InsertIntoTable` (an insert the analyzer did not turn into a command), `View` (always a
 * persistent view: 2.4's temporary views are their plans), `Union` (no by-name flag) and
 * `CreateViewCommand` (`child`, not `plan`). There are no CTEs (the analyzer inlines them), no
 * DataSource V2 catalogs and no MERGE.
 */
private[listener] object Versioned {
  object Described {
    def unapply(p: LogicalPlan): Option[NodeInfo] = describe.lift(p)
  }

  /** No v2 `CREATE TABLE` on 2.4 (Tables.learnCreated). */
  def createdTable(p: LogicalPlan): Option[J.Obj] = None

  object Leaf {
    def unapply(p: LogicalPlan): Option[J.Obj] = p match {
      case v: View => Some(viewDataset(v.desc, temporary = false))
      case _ => None
    }
  }

  private val describe: PartialFunction[LogicalPlan, NodeInfo] = {
    case n: Union => NodeInfo(args = Seq("byName" -> J.Bool(false), "allowMissingCol" -> J.Bool(false)))
    case n: View => NodeInfo(args = Seq("isTempView" -> J.Bool(false)), dataset = Some(viewDataset(n.desc, temporary = false)))
    case c: InsertIntoTable =>
      val ds = leafDataset(c.table).getOrElse(other(c.table.getClass.getName))
      val partitions = c.partition.keys.toSeq
      NodeInfo(nested = Seq("table" -> c.table), write = Some(WriteSpec(ds, if (c.overwrite) "overwrite" else "append",
        names(c.table.output), partitions, Some(ChildQuery(0)))))
    case c: CreateViewCommand =>
      val temporary = c.viewType != PersistedView
      val ds = J.obj(
        "kind" -> J.Str("view"),
        "catalog" -> J.Str(SessionCatalog),
        "namespace" -> J.strs(c.name.database.toSeq),
        "name" -> J.Str(c.name.table),
        "temporary" -> J.Bool(temporary))
      val cols = if (c.userSpecifiedColumns.nonEmpty) c.userSpecifiedColumns.map(_._1) else names(c.child.output)
      NodeInfo(nested = Seq("query" -> c.child), args = Seq("viewType" -> J.Str(shortName(c.viewType))),
        write = Some(WriteSpec(ds, if (c.replace) "replace" else "create", cols, Nil, Some(NestedQuery("query")))))
  }
}
