package io.colline.listener

import scala.util.Try

import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, V2WriteCommand}
import org.apache.spark.sql.connector.write.RowLevelOperation
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation

/**
 * Row-level commands (event format 1.3): MERGE / UPDATE / DELETE on tables that support row-level
 * operations (Iceberg, Delta's v2 path, …). The analyzer rewrites them into `ReplaceData`
 * (copy-on-write) or `WriteDelta` (merge-on-read) over a query that, for MERGE, holds a `MergeRows`.
 * `WriteDelta` is 3.4+ and `MergeRows`' instruction shape (Keep/Split/Discard) 3.5+, so everything
 * here goes by class name (SparkClasses) and reflection; each method is defensive and falls back to the generic
 * serialization when a shape is unknown.
 */
private[listener] object RowLevel {
  /** Spark's marker of metadata columns (`_file`, `_pos`, `_metadata`, …) in attribute metadata. */
  private val MetadataColKey = "__metadata_col"

  /** `case RowLevel.Described(info)` in Nodes.describe: a row-level node whose shape is known. */
  object Described {
    def unapply(p: LogicalPlan): Option[NodeInfo] = {
      val cls = p.getClass.getName
      if (cls == SparkClasses.MergeRows) Try(mergeRows(p)).toOption.flatten
      else if (SparkClasses.RowLevelWrites(cls)) p match {
        case c: V2WriteCommand => Try(write(c)).toOption.flatten
        case _ => None
      }
      else None
    }
  }

  /** A metadata column of a relation: not a data column of the dataset. */
  def isMetadataColumn(a: Attribute): Boolean = Try(a.metadata.contains(MetadataColKey)).getOrElse(false)

  /**
   * ReplaceData / WriteDelta: the target (the original table), the operation (`MERGE`, `UPDATE`,
   * `DELETE`, also the write mode in lower case), the row-level `condition`, and `dataInput`: the
   * query's output attributes that are written to the target's columns, in column order. The query
   * also outputs the row operation (WriteDelta), row ids and metadata columns, which are not data.
   */
  private def write(c: V2WriteCommand): Option[NodeInfo] = {
    val original = Reflect.plan(c, "originalTable").getOrElse(c.table match { case p: LogicalPlan => p; case _ => null })
    val ds = original match {
      case r: DataSourceV2Relation => Versioned.v2Dataset(r)
      case p: LogicalPlan => Nodes.leafDataset(p).getOrElse(Nodes.other(p.getClass.getName))
      case _ => return None
    }
    // through the interface: the connector's operation class need not be public
    val operation = Reflect.call(c, "operation").collect { case o: RowLevelOperation => o.command().name() }
      .getOrElse("WRITE")
    val columns = original.output.filterNot(isMetadataColumn).map(_.name)
    val input = dataInput(c)
    val exprs = Seq.newBuilder[(String, Seq[Expression])]
    Reflect.call(c, "condition").collect { case e: Expression => exprs += "condition" -> Seq(e) }
    if (input.nonEmpty) exprs += "dataInput" -> input
    Some(NodeInfo(
      exprs = exprs.result(),
      args = Seq("operation" -> J.Str(operation)),
      nested = Seq("table" -> original),
      write = Some(WriteSpec(ds, operation.toLowerCase(java.util.Locale.ROOT), columns, Nil, Some(ChildQuery(0))))))
  }

  /**
   * The query output attributes written to the data columns: from the row projection (WriteDelta
   * 3.4+, ReplaceData 4.0+), else ReplaceData's `dataInput` (3.5), else every output that is not a
   * metadata column.
   */
  private def dataInput(c: V2WriteCommand): Seq[Attribute] = {
    val out = c.query.output
    val row: Option[AnyRef] = Reflect.call(c, "projections").flatMap(pr => Reflect.call(pr, "rowProjection")).flatMap {
      case o: Option[_] => o.collect { case r: AnyRef => r }
      case r => Some(r)
    }
    val ordinals: Option[Seq[Int]] = row.flatMap(r => Reflect.call(r, "colOrdinals"))
      .collect { case s: Seq[_] => s.collect { case i: java.lang.Integer => i.intValue() } }
    ordinals.map(_.filter(i => i >= 0 && i < out.size).map(out))
      .orElse(Reflect.call(c, "dataInput").collect { case s: Seq[_] => s.collect { case a: Attribute => a } })
      .getOrElse(out.filterNot(isMetadataColumn))
  }

  /**
   * MergeRows (3.5+): for each clause list (`matched`, `notMatched`, `notMatchedBySource`) and each
   * instruction i, `args["<list>.<i>.instruction"]` (`Keep`, `Split`, `Discard`; 4.x `Keep` also
   * `args["<list>.<i>.context"]`), and the roles `<list>.<i>.condition`, `<list>.<i>.output` (one
   * expression per output column of the node) and, for Split, `<list>.<i>.otherOutput`.
   */
  private def mergeRows(p: LogicalPlan): Option[NodeInfo] = {
    val exprs = Seq.newBuilder[(String, Seq[Expression])]
    val args = Seq.newBuilder[(String, J)]
    def expr(o: AnyRef, m: String): Option[Expression] = Reflect.call(o, m).collect { case e: Expression => e }
    def exprList(o: AnyRef, m: String): Option[Seq[Expression]] =
      Reflect.call(o, m).collect { case s: Seq[_] => s.collect { case e: Expression => e } }
    expr(p, "isSourceRowPresent").foreach(e => exprs += "isSourceRowPresent" -> Seq(e))
    expr(p, "isTargetRowPresent").foreach(e => exprs += "isTargetRowPresent" -> Seq(e))
    var known = false
    for (list <- Seq("matched", "notMatched", "notMatchedBySource")) {
      Reflect.call(p, list + "Instructions").collect { case s: Seq[_] => s }.getOrElse(Nil).zipWithIndex.foreach {
        case (ins: AnyRef, i) =>
          known = true
          val key = s"$list.$i"
          args += s"$key.instruction" -> J.Str(Nodes.shortName(ins))
          Reflect.call(ins, "context").foreach(ctx => args += s"$key.context" -> J.Str(Nodes.shortName(ctx)))
          expr(ins, "condition").foreach(e => exprs += s"$key.condition" -> Seq(e))
          exprList(ins, "output").foreach(es => exprs += s"$key.output" -> es)
          exprList(ins, "otherOutput").foreach(es => exprs += s"$key.otherOutput" -> es)
        case _ =>
      }
    }
    if (known) Some(NodeInfo(exprs = exprs.result(), args = args.result())) else None
  }
}
