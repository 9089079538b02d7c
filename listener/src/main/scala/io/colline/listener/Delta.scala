package io.colline.listener

import scala.util.Try

import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/**
 * Delta Lake's own row-level commands (event format 1.4): Delta runs MERGE, UPDATE and DELETE as
 * `MergeIntoCommand`, `UpdateCommand` and `DeleteCommand` (delta-spark 3.x and 4.x), not through
 * Spark's rewrite into ReplaceData / WriteDelta, and keeps the target and the source as fields
 * rather than children. delta-spark is optional on the driver, so everything here goes by class
 * name (SparkClasses) and reflection; a shape that is not the expected one falls back to the
 * generic serialization.
 *
 * Each of Delta's resolved actions (`DeltaMergeAction`: target column name parts and a value)
 * is serialized as a key (the target attribute, found by name in the target relation's output,
 * as Delta itself resolved it) and a value, in two aligned roles, so that both carry their SQL.
 */
private[listener] object DeltaCommands {
  /** `case DeltaCommands.Described(info)` in Nodes.describe. */
  object Described {
    def unapply(p: LogicalPlan): Option[NodeInfo] = p.getClass.getName match {
      case SparkClasses.DeltaMerge => Try(merge(p)).toOption.flatten
      case SparkClasses.DeltaUpdate => Try(update(p)).toOption.flatten
      case SparkClasses.DeltaDelete => Try(delete(p)).toOption.flatten
      case _ => None
    }
  }

  private def expr(o: AnyRef, m: String): Option[Expression] = Reflect.call(o, m).flatMap {
    case e: Expression => Some(e)
    case o: Option[_] => o.collect { case e: Expression => e }
    case _ => None
  }

  private def seq(o: AnyRef, m: String): Seq[AnyRef] =
    Reflect.call(o, m).collect { case s: Seq[_] => s.collect { case x: AnyRef => x } }.getOrElse(Nil)

  /**
   * The target relation, its identity and its data columns. The catalog table, when Delta knows
   * it, names the dataset (a table read by name elsewhere is the same node); else the relation's.
   */
  private def target(p: LogicalPlan): Option[(LogicalPlan, J.Obj, Seq[String], Seq[String])] = {
    val t = Reflect.plan(p, "target").getOrElse(return None)
    val ct = Reflect.call(p, "catalogTable").collect { case Some(c: CatalogTable) => c }
    val leaf = t.collectLeaves().headOption.getOrElse(t)
    val ds = ct.map(c => Nodes.tableDataset(c)).orElse(Nodes.leafDataset(leaf)).getOrElse(return None)
    val cols = t.output.filterNot(RowLevel.isMetadataColumn).map(_.name)
    Some((t, ds, cols, ct.map(_.partitionColumnNames).getOrElse(Nil)))
  }

  private def write(ds: J.Obj, mode: String, cols: Seq[String], parts: Seq[String]) =
    Some(WriteSpec(ds, mode, cols, parts, Some(NestedQuery("table"))))

  /**
   * Delta's resolved actions as aligned lists: the target attribute each sets (found by name in the
   * target's output, as Delta resolved it; for a nested field, its top-level column) and the value.
   */
  private def assignments(actions: Seq[AnyRef], output: Seq[Attribute]): (Seq[Expression], Seq[Expression]) =
    actions.flatMap { a =>
      val key = Reflect.strings(a, "targetColNameParts").headOption.flatMap(n => output.find(_.name.equalsIgnoreCase(n)))
      for (k <- key; v <- expr(a, "expr")) yield (k: Expression, v)
    }.unzip

  /**
   * MergeIntoCommand: `mergeCondition`, per clause list (`matched`, `notMatched`,
   * `notMatchedBySource`) and clause i `<list>.<i>.condition`, `<list>.<i>.keys` (the target
   * attributes set) and `<list>.<i>.values` (their new values, aligned with the keys), and
   * `args["<list>.<i>.action"]` (`update`, `delete`, `insert`); `plans.table` is the target,
   * `plans.source` the source.
   */
  private def merge(p: LogicalPlan): Option[NodeInfo] = {
    val (t, ds, cols, parts) = target(p).getOrElse(return None)
    val source = Reflect.plan(p, "source").getOrElse(return None)
    val exprs = Seq.newBuilder[(String, Seq[Expression])]
    val args = Seq.newBuilder[(String, J)]
    expr(p, "condition").foreach(c => exprs += "mergeCondition" -> Seq(c))
    for ((list, method) <- Seq("matched" -> "matchedClauses", "notMatched" -> "notMatchedClauses",
        "notMatchedBySource" -> "notMatchedBySourceClauses")) {
      seq(p, method).zipWithIndex.foreach { case (clause, i) =>
        val key = s"$list.$i"
        args += s"$key.action" -> J.Str(action(clause))
        expr(clause, "condition").foreach(c => exprs += s"$key.condition" -> Seq(c))
        val (keys, values) = assignments(seq(clause, "resolvedActions"), t.output)
        if (keys.nonEmpty) exprs ++= Seq(s"$key.keys" -> keys, s"$key.values" -> values)
      }
    }
    Some(NodeInfo(exprs = exprs.result(), args = ("operation" -> J.Str("MERGE")) +: args.result(),
      nested = Seq("table" -> t, "source" -> source), write = write(ds, "merge", cols, parts)))
  }

  /** The kind of a clause from its class: `DeltaMergeIntoMatchedUpdateClause` is `update`. */
  private def action(clause: AnyRef): String = {
    val n = Nodes.shortName(clause)
    Seq("Update", "Delete", "Insert").find(k => n.contains(k + "Clause"))
      .map(_.toLowerCase(java.util.Locale.ROOT)).getOrElse(n)
  }

  /**
   * UpdateCommand: `keys` (every target column whose new value is not the column itself),
   * `values` (the new values, aligned) and `condition` (the WHERE); `plans.table` is the target.
   */
  private def update(p: LogicalPlan): Option[NodeInfo] = {
    val (t, ds, cols, parts) = target(p).getOrElse(return None)
    val values = seq(p, "updateExpressions").collect { case e: Expression => e }
    val set = t.output.zip(values).filterNot {
      case (a, v: Attribute) => v.exprId == a.exprId
      case _ => false
    }
    val exprs = Seq("keys" -> set.map(_._1: Expression), "values" -> set.map(_._2)) ++
      expr(p, "condition").map(c => "condition" -> Seq(c))
    Some(NodeInfo(exprs = exprs, args = Seq("operation" -> J.Str("UPDATE")), nested = Seq("table" -> t),
      write = write(ds, "update", cols, parts)))
  }

  /** DeleteCommand: `condition` (the WHERE; absent: every row); `plans.table` is the target. */
  private def delete(p: LogicalPlan): Option[NodeInfo] = {
    val (t, ds, cols, parts) = target(p).getOrElse(return None)
    Some(NodeInfo(exprs = expr(p, "condition").map(c => "condition" -> Seq(c)).toSeq,
      args = Seq("operation" -> J.Str("DELETE")), nested = Seq("table" -> t), write = write(ds, "delete", cols, parts)))
  }
}
