package io.colline.listener

import scala.util.Try

import org.apache.spark.sql.catalyst.analysis.{PersistedView, ResolvedTable}
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.connector.catalog.Identifier
import org.apache.spark.sql.execution.command.CreateViewCommand
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation

import Nodes._

/**
 * The plan nodes of Spark 3.3 and later that Spark 2.4 does not have (or has in another shape):
 * Union by name, CTE definitions and references, rebalancing, views with their temporary flag,
 * MERGE INTO, CACHE TABLE AS SELECT, DataSource V2 relations, writes, CTAS and DDL. Nodes.scala
 * holds what every line shares; src/main/spark24 has 2.4's own Versioned.
 */
private[listener] object Versioned {
  /** The node's description, for the nodes of this line's own shapes. */
  object Described {
    def unapply(p: LogicalPlan): Option[NodeInfo] = describe.lift(p)
  }

  /** The identity of a leaf of this line's own shapes. */
  object Leaf {
    def unapply(p: LogicalPlan): Option[J.Obj] = p match {
      case r: DataSourceV2Relation => Some(v2Dataset(r))
      case v: View => Some(viewDataset(v.desc, v.isTempView))
      case s if SparkClasses.StreamSources(shortName(s)) => Streaming.sourceDataset(s)
      case _ => None
    }
  }

  private val describe: PartialFunction[LogicalPlan, NodeInfo] = {
    case n: Union => NodeInfo(args = Seq("byName" -> J.Bool(n.byName), "allowMissingCol" -> J.Bool(n.allowMissingCol)))
    case n: RebalancePartitions => NodeInfo(exprs = Seq("partitionExpressions" -> n.partitionExpressions))
    case n: CTERelationDef => NodeInfo(args = Seq("cteId" -> J.Num(n.id)))
    case n: CTERelationRef => NodeInfo(args = Seq("cteId" -> J.Num(n.cteId)))
    case n: View => NodeInfo(args = Seq("isTempView" -> J.Bool(n.isTempView)),
      dataset = Some(viewDataset(n.desc, n.isTempView)))
    case n: MergeIntoTable => mergeInto(n)
    case c: CreateViewCommand =>
      val temporary = c.viewType != PersistedView
      val ds = J.obj(
        "kind" -> J.Str("view"),
        "catalog" -> J.Str(Compat.tableCatalog(c.name).getOrElse(SessionCatalog)),
        "namespace" -> J.strs(c.name.database.toSeq),
        "name" -> J.Str(c.name.table),
        "temporary" -> J.Bool(temporary))
      val cols = if (c.userSpecifiedColumns.nonEmpty) c.userSpecifiedColumns.map(_._1) else names(c.plan.output)
      NodeInfo(nested = Seq("query" -> c.plan), args = Seq("viewType" -> J.Str(shortName(c.viewType))),
        write = Some(WriteSpec(ds, if (c.replace) "replace" else "create", cols, Nil, Some(NestedQuery("query")))))
    case c: CacheTableAsSelect =>
      NodeInfo(nested = Seq("query" -> c.plan), args = Seq("tempViewName" -> J.Str(c.tempViewName)))
    // ---- v2 writes
    case c: AppendData => v2Write(c, "append")
    case c: OverwriteByExpression => v2Write(c, "overwrite")
    case c: OverwritePartitionsDynamic => v2Write(c, "overwrite")
    case c: V2WriteCommand => // ReplaceData, WriteDelta: row-level; the consumer's generic rule
      NodeInfo(exprs = generic(c), nested = Seq("table" -> c.table).collect { case (r, t: LogicalPlan) => r -> t })
    case c: CreateTableAsSelect => v2Ctas(c.name, c.query, c.partitioning.map(_.describe()), "create")
    case c: ReplaceTableAsSelect => v2Ctas(c.name, c.query, c.partitioning.map(_.describe()), "replace")
    case c: DropTable => ddl("drop", v2Ident(c.child))
    case c: TruncateTable => ddl("truncate", v2Ident(c.table))
    case c: RenameTable =>
      val to = c.child match {
        case ResolvedTable(catalog, id, _, _) =>
          val parts = c.newName.toSeq
          val ns = if (parts.size > 1) parts.init.toArray else id.namespace()
          Some(v2TableDataset(catalog.name(), Identifier.of(ns, parts.last), None))
        case _ => None
      }
      ddl("rename", v2Ident(c.child), "to" -> to)
  }

  /** The table a v2 `CREATE TABLE … LOCATION` creates, with that location (Tables.learnCreated). */
  def createdTable(p: LogicalPlan): Option[J.Obj] = p match {
    case c: CreateTable =>
      for {
        loc <- Reflect.call(c.tableSpec, "location").collect { case Some(l: String) => l }
        (catalog, id) <- Some(c.name).collect { case Compat.ResolvedIdent(cat, i) => (cat, i) }
      } yield J.obj("kind" -> J.Str("table"), "catalog" -> J.Str(catalog.name()),
        "namespace" -> J.strs(id.namespace().toSeq), "name" -> J.Str(id.name()), "location" -> J.Str(loc))
    case _ => None
  }

  def v2Dataset(r: DataSourceV2Relation): J.Obj = (r.catalog, r.identifier) match {
    case (Some(c), Some(id)) => v2TableDataset(c.name(), id, Try(r.table.properties()).toOption)
    case _ => other(Try(r.table.name()).getOrElse(r.table.getClass.getName))
  }

  private def v2TableDataset(catalog: String, id: Identifier,
      props: Option[java.util.Map[String, String]]): J.Obj = {
    def prop(k: String) = props.flatMap(p => Option(p.get(k)))
    // a table named by its path (Delta's delta.`/p`, Iceberg's format("iceberg").load("/p") as
    // default_iceberg./p.t): the catalog table at that path where one is known, else the path
    val parts = id.namespace().toSeq :+ id.name()
    if (parts.exists(Tables.isPath)) {
      val path = prop("location").getOrElse(if (Tables.isPath(id.name())) id.name() else parts.mkString("/"))
      return dataAtPath(prop("provider").orNull, Seq(path))
    }
    val t = J.obj(
      "kind" -> J.Str("table"),
      "catalog" -> J.Str(catalog),
      "namespace" -> J.strs(id.namespace().toSeq),
      "name" -> J.Str(id.name()),
      "provider" -> J.opt(prop("provider")),
      "location" -> J.opt(prop("location").map(Redact.uri)),
      "tableType" -> J.opt(prop("external").map(e => if (e == "true") "EXTERNAL" else "MANAGED")))
    Tables.learn(t)
    t
  }

  private def v2Ident(p: LogicalPlan): Option[J.Obj] = p match {
    case Compat.ResolvedIdent(catalog, id) => Some(v2TableDataset(catalog.name(), id, None))
    case ResolvedTable(catalog, id, _, _) => Some(v2TableDataset(catalog.name(), id, None))
    case _ => None
  }
  private def v2Write(c: V2WriteCommand, mode: String): NodeInfo = {
    val (ds, cols, nested) = c.table match {
      case r: DataSourceV2Relation => (v2Dataset(r), names(r.output), Seq("table" -> (r: LogicalPlan)))
      case lp: LogicalPlan => (leafDataset(lp).getOrElse(other(lp.getClass.getName)), names(lp.output), Seq("table" -> lp))
      case other => (Nodes.other(other.getClass.getName), names(c.query.output), Nil)
    }
    val exprs = c match {
      case o: OverwriteByExpression => Seq("deleteExpr" -> Seq(o.deleteExpr))
      case _ => Nil
    }
    NodeInfo(exprs = exprs, nested = nested, args = Seq("isByName" -> J.Bool(c.isByName)),
      write = Some(WriteSpec(ds, mode, cols, Nil, Some(ChildQuery(0)))))
  }

  private def v2Ctas(name: LogicalPlan, query: LogicalPlan, partitioning: Seq[String], mode: String): NodeInfo = {
    val ds = name match {
      case Compat.ResolvedIdent(catalog, id) => v2TableDataset(catalog.name(), id, None)
      case other => Nodes.other(other.getClass.getName)
    }
    NodeInfo(nested = Seq("query" -> query),
      write = Some(WriteSpec(ds, mode, names(query.output), partitioning, Some(NestedQuery("query")))))
  }
  private def mergeInto(m: MergeIntoTable): NodeInfo = {
    val exprs = Seq.newBuilder[(String, Seq[Expression])]
    val args = Seq.newBuilder[(String, J)]
    exprs += "mergeCondition" -> Seq(m.mergeCondition)
    def actions(prefix: String, as: Seq[MergeAction]): Unit = as.zipWithIndex.foreach { case (a, i) =>
      args += s"$prefix.$i.action" -> J.Str(shortName(a))
      a.condition.foreach(c => exprs += s"$prefix.$i.condition" -> Seq(c))
      val assignments = a match {
        case u: UpdateAction => u.assignments
        case in: InsertAction => in.assignments
        case _ => Nil
      }
      if (assignments.nonEmpty) exprs += s"$prefix.$i.assignments" -> assignments
    }
    actions("matched", m.matchedActions)
    actions("notMatched", m.notMatchedActions)
    actions("notMatchedBySource", Compat.notMatchedBySourceActions(m))
    NodeInfo(exprs = exprs.result(), args = args.result())
  }
}
