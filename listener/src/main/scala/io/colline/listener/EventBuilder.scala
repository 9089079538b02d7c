package io.colline.listener

import java.time.Instant
import java.util.UUID

import scala.collection.mutable
import scala.collection.mutable.ArrayBuffer
import scala.util.Try
import scala.util.matching.Regex

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference, CreateNamedStruct, Expression, GetArrayStructFields, GetStructField, Literal, NamedExpression, ScalaUDF, SubqueryExpression}
import org.apache.spark.sql.catalyst.plans.logical.{Command, LogicalPlan}
import org.apache.spark.sql.types.DataType

/** What the listener-bus thread snapshots from a QueryExecution; the rest happens later. */
private[listener] final case class Pending(
    funcName: String,
    plan: LogicalPlan,
    qeId: Long,
    success: Boolean,
    error: Option[String],
    durationNs: Option[Long],
    endedAtMs: Long,
    appId: String,
    appName: String,
    user: String,
    redaction: Option[Regex],
    analyzed: Boolean = false,
    parent: Option[ParentRun] = None)

/** Execution facts observed on the listener bus (see ExecutionTracker). */
private[listener] final case class ExecInfo(executionId: Long, rootExecutionId: Long, nestedWrite: Boolean,
    stream: Option[StreamBatch] = None, connect: Option[ConnectOperation] = None)

private[listener] sealed trait Built
private[listener] final case class Event(json: J.Obj, executionId: Long, rootClass: String) extends Built
private[listener] final case class Skipped(reason: String) extends Built

private[listener] object EventBuilder {
  val SchemaVersion = "1.5"
  val SqlMax = 240
  val ErrorMax = 2000

  /** Root classes of commands that never carry lineage (by short class name). */
  private val NoLineage: Regex =
    ("^(Describe|Show|Analyze|Cache|Uncache|Clear|Refresh|Explain|Set|Reset|Use|Drop|Truncate|Comment|" +
      "Add(Jar|File|Archive)|List|Msck|Repair|Recover|Rename|Alter(?!ViewAs)|LoadData|" +
      "Create(Namespace|Database|Function|Table|DataSourceTable|TableLike|Index|TempViewUsing|Variable)" +
      "(Command)?$).*").r

  /** DDL root classes published for the identity change they make (see Nodes: `ddl`). */
  private val Ddl: Set[String] = Set("DropTableCommand", "AlterTableRenameCommand", "TruncateTableCommand",
    "LoadDataCommand", "DropTable", "RenameTable", "TruncateTable")

  private lazy val jvmId: String =
    Try(NamedExpression.newExprId.jvmId.toString).getOrElse(UUID.randomUUID().toString)

  def build(p: Pending, exec: Option[ExecInfo], cfg: Config): Built = {
    val rootClass = Nodes.shortName(p.plan)
    if (NoLineage.pattern.matcher(rootClass).matches() && !Ddl(rootClass)) {
      if (rootClass.startsWith("Create")) Tables.learnCreated(p.plan) // where a table lives (Tables)
      return Skipped("noLineage")
    }

    val microBatch = new MicroBatchBinding(exec.flatMap(_.stream))
    val layout = new Layout(cfg.maskSqlLiterals, p.redaction, microBatch)
    layout.tree(p.plan)
    layout.finish()
    if (!layout.hasWrite && !layout.hasData && !layout.hasDdl) return Skipped("noLineage")

    val executionId = exec.map(_.executionId).getOrElse(p.qeId)
    val now = System.currentTimeMillis()
    val query = J.obj(
      "executionId" -> J.Num(executionId),
      "funcName" -> J.str(p.funcName),
      "status" -> J.Str(if (p.success) "success" else "failure"),
      "error" -> J.opt(p.error),
      "durationMs" -> p.durationNs.map(ns => J.Num(ns / 1000000L)).getOrElse(J.Null),
      "endedAt" -> J.Str(Instant.ofEpochMilli(p.endedAtMs).toString))
    microBatch.json.foreach(query.put("stream", _)) // 1.5: a write of a foreachBatch micro-batch
    exec.flatMap(_.connect).foreach(c => query.put("connect", c.json))
    val event = J.obj(
      "schemaVersion" -> J.Str(SchemaVersion),
      "eventId" -> J.Str(UUID.randomUUID().toString),
      "emittedAt" -> J.Str(Instant.ofEpochMilli(now).toString),
      "producer" -> J.obj(
        "name" -> J.Str(if (p.analyzed) "colline-analyze" else "colline-listener"),
        "version" -> J.Str(Versions.listener),
        "spark" -> J.Str(Versions.spark),
        "scala" -> J.Str(Versions.scalaBinary)),
      "app" -> J.obj(
        "id" -> J.str(p.appId),
        "name" -> J.str(p.appName),
        "user" -> J.str(p.user),
        "namespace" -> J.Str(cfg.namespace)),
      "query" -> query)
    p.parent.foreach(x => event.put("parent", x.json))
    event.put("jvmId", J.Str(jvmId))
    event.put("markers", J.obj(
      "nestedWrite" -> J.Bool(exec.exists(_.nestedWrite) && layout.hasWrite),
      "truncated" -> J.Bool(false),
      "analyzed" -> J.Bool(p.analyzed)))
    event.put("root", J.Num(0))
    event.put("nodes", J.arr(layout.nodes))
    Event(event, executionId, rootClass)
  }

  /**
   * The dataset of the first write node of a plan, in the order of the event's nodes (pre-order,
   * then nested plans), without building the event: what a nested write contributes to its
   * outer write (its location). None: the plan writes nothing.
   */
  def firstWrite(plan: LogicalPlan): Option[J.Obj] = {
    val later = mutable.Queue[LogicalPlan](plan)
    var found: Option[J.Obj] = None
    while (found.isEmpty && later.nonEmpty) {
      var stack: List[LogicalPlan] = List(later.dequeue())
      while (found.isEmpty && stack.nonEmpty) {
        val p = stack.head
        stack = stack.tail
        Try(Nodes.describe(p)).toOption.foreach { info =>
          found = info.write.map(_.dataset)
          info.nested.foreach { case (_, n) => later.enqueue(n) }
        }
        stack = p.children.toList ++ stack
      }
    }
    found
  }

  /** The `write.dataset` objects of an event's nodes. */
  def writeDatasets(e: J.Obj): Seq[J.Obj] = e.get("nodes").toSeq.flatMap {
    case a: J.Arr => a.items.toSeq.flatMap {
      case n: J.Obj => n.get("write").toSeq.flatMap {
        case w: J.Obj => w.get("dataset").collect { case d: J.Obj => d }.toSeq
        case _ => Nil
      }
      case _ => Nil
    }
    case _ => Nil
  }

  /** The qualified location a write dataset names (table location or first path), if any. */
  def location(d: J.Obj): Option[String] = (d.get("kind"), d.get("location"), d.get("paths")) match {
    case (Some(J.Str("table")), Some(J.Str(l)), _) => Some(l)
    case (Some(J.Str("path")), _, Some(a: J.Arr)) => a.items.headOption.collect { case J.Str(p) => p }
    case _ => None
  }

  /**
   * Completes an outer write from its nested write: a CTAS target has no location before it is
   * created, and an `INSERT OVERWRITE DIRECTORY` path is not qualified; the nested write that
   * Spark ran for it (same root execution) has both.
   */
  def completeFrom(d: J.Obj, nestedLocation: String): Unit =
    (d.get("kind"), d.get("location"), d.get("paths")) match {
      case (Some(J.Str("table")), Some(J.Null) | None, _) => d.put("location", nestedLocation)
      case (Some(J.Str("path")), _, Some(a: J.Arr))
          if a.items.size == 1 && a.items.head.isInstanceOf[J.Str] &&
            !a.items.head.asInstanceOf[J.Str].v.matches("^[A-Za-z][A-Za-z0-9+.-]*:.*") &&
            nestedLocation.endsWith(a.items.head.asInstanceOf[J.Str].v.stripSuffix("/")) =>
        d.put("paths", J.strs(Seq(nestedLocation)))
      case _ =>
    }

  /** The degraded form of an event above the size cap: expressions dropped from every node. */
  def degrade(e: J.Obj): Unit = {
    e.get("nodes").foreach {
      case a: J.Arr => a.items.foreach { case n: J.Obj => n.put("exprs", new J.Obj); case _ => }
      case _ =>
    }
    e.get("markers").foreach { case m: J.Obj => m.put("truncated", true); case _ => }
  }

  /** Lays out nodes in pre-order, then appended trees for nested and subquery plans. */
  private final class Layout(maskLiterals: Boolean, redaction: Option[Regex], microBatch: MicroBatchBinding) {
    val nodes = ArrayBuffer.empty[J.Obj]
    private val deferred = mutable.Queue.empty[(J.Ref, LogicalPlan)]
    var hasWrite = false
    var hasData = false
    var hasDdl = false
    /** `catalogString` per DataType instance, for this event (the same types recur in every node's output). */
    private val typeNames = new java.util.IdentityHashMap[DataType, String]()

    private def typeName(t: DataType): String = {
      var s = typeNames.get(t)
      if (s == null) {
        s = TypeNames(t)
        typeNames.put(t, s)
      }
      s
    }

    /** The SQL text of each top-level expression, built once per expression of this event. */
    private val sqlTexts = new java.util.IdentityHashMap[Expression, Option[String]]()

    def tree(root: LogicalPlan): Int = visit(root)

    def finish(): Unit = while (deferred.nonEmpty) {
      val (ref, plan) = deferred.dequeue()
      ref.id = visit(plan)
    }

    private def defer(plan: LogicalPlan): J.Ref = {
      val r = new J.Ref
      deferred.enqueue(r -> plan)
      r
    }

    private def visit(p: LogicalPlan): Int = {
      val id = nodes.size
      val o = new J.Obj
      nodes += o
      o.add("id", J.Num(id.toLong)) // fresh keys, in the event's order: add, not put (no search)
      o.add("class", J.Str(p.getClass.getName))
      if (!p.isInstanceOf[Command] &&
        !p.getClass.getName.startsWith(SparkClasses.AnalysisPackage)) hasData = true

      val childIds = p.children.map(visit)
      o.add("children", J.arr(childIds.map(i => J.Num(i.toLong))))
      o.add("output", J.arr(Try(p.output).getOrElse(Nil).map(attr)))

      val described = Try(Nodes.describe(p)).getOrElse(NodeInfo(exprs = Try(Nodes.generic(p)).getOrElse(Nil)))
      // 1.5: the LogicalRDD of a foreachBatch micro-batch carries the streaming query's input plan
      val info = Try(microBatch.plan(p)).toOption.flatten
        .map(q => described.copy(nested = described.nested :+ ("microBatch" -> q))).getOrElse(described)

      val exprs = new J.Obj
      info.exprs.foreach { case (role, es) => exprs.put(role, J.arr(es.map(e => expr(e, top = true)))) }
      o.add("exprs", exprs)

      val plans = new J.Obj
      val refs = mutable.Map.empty[String, J.Ref]
      info.nested.foreach { case (role, plan) =>
        val r = defer(plan)
        refs(role) = r
        plans.put(role, r)
      }
      o.add("plans", plans)

      val args = new J.Obj
      info.args.foreach { case (k, v) => args.put(k, v) }
      o.add("args", args)

      o.add("dataset", info.dataset.getOrElse(J.Null))
      info.ddl.foreach { d =>
        hasDdl = true
        o.add("ddl", d)
      }
      o.add("write", info.write.map { w =>
        hasWrite = true
        val q: J = w.query match {
          case Some(ChildQuery(i)) if i < childIds.size => J.Num(childIds(i).toLong)
          case Some(NestedQuery(role)) => refs.get(role).map(r => r: J).getOrElse(J.Null)
          case _ => J.Null
        }
        J.obj(
          "dataset" -> w.dataset,
          "mode" -> J.Str(w.mode),
          "columns" -> J.strs(w.columns),
          "partitionColumns" -> J.strs(w.partitionColumns),
          "query" -> q)
      }.getOrElse(J.Null))
      id
    }

    /**
     * Each column's object, built once per event and shared by every output that lists it (equal
     * AttributeReferences give equal objects: each field newAttr reads is one they compare).
     */
    private val attrs = new java.util.HashMap[AttributeReference, J.Obj]()

    private def attr(a: Attribute): J.Obj = a match {
      case r: AttributeReference =>
        var o = attrs.get(r)
        if (o == null) {
          o = newAttr(r)
          o.shared = true
          attrs.put(r, o)
        }
        o
      case _ => newAttr(a)
    }

    private def newAttr(a: Attribute): J.Obj = {
      val o = new J.Obj
      Try(a.exprId.id).foreach(i => o.add("exprId", J.Num(i)))
      o.add("name", J.str(a.name))
      Try(typeName(a.dataType)).foreach(t => o.add("type", J.str(t)))
      o.add("nullable", J.Bool(Try(a.nullable).getOrElse(true)))
      o.add("qualifier", J.strs(Try(a.qualifier).getOrElse(Nil)))
      if (RowLevel.isMetadataColumn(a)) o.add("metadataCol", J.Bool(true)) // 1.3: `_file`, `_pos`, `_metadata`, …
      o
    }

    private def expr(e: Expression, top: Boolean): J.Obj = {
      val o = new J.Obj
      o.add("class", J.Str(Nodes.shortName(e)))
      e match {
        case _: Literal =>
          Try(typeName(e.dataType)).foreach(t => o.add("type", J.str(t)))
          return o
        case n: NamedExpression =>
          Try(n.exprId.id).foreach(i => o.add("exprId", J.Num(i)))
          Try(n.name).foreach(nm => o.put("name", nm))
        case u: ScalaUDF =>
          u.udfName.foreach(nm => o.put("name", nm))
        case _ if o.get("class").exists { case J.Str(c) => c.contains("UDF") || c.contains("UDAF"); case _ => false } =>
          Reflect.string(e, "name").foreach(nm => o.put("name", nm))
        case _ =>
      }
      fieldNames(e, o) // 1.4: struct fields read and built
      commonId(e, o) // 1.5: Spark 4's common expressions (With)
      if (Try(e.resolved).getOrElse(false)) Try(typeName(e.dataType)).foreach(t => o.add("type", J.str(t)))
      if (top) sql(e).foreach(s => o.add("sql", J.str(s)))
      e match {
        case s: SubqueryExpression => Try(s.plan).foreach(pl => o.add("plan", defer(pl)))
        case _ =>
      }
      if (e.children.nonEmpty) o.add("children", J.arr(e.children.map(c => expr(c, top = false))))
      o
    }

    /**
     * The field a GetStructField or GetArrayStructFields reads (`name`), the fields a
     * CreateNamedStruct builds (`fields`, in the order of its values): schema names, not data.
     */
    private def fieldNames(e: Expression, o: J.Obj): Unit = Try(e match {
      case g: GetStructField => o.put("name", g.name.getOrElse(g.childSchema(g.ordinal).name)) // extractFieldName, which 2.4 lacks
      case g: GetArrayStructFields => o.put("name", g.field.name)
      case c: CreateNamedStruct => o.put("fields", J.strs(c.dataType.fieldNames.toSeq))
      case _ =>
    })

    /**
     * The id that ties a `CommonExpressionRef` to its `CommonExpressionDef` (Spark 4.x rewrites
     * NULLIF and BETWEEN into `With`: the argument is defined once and referenced where used).
     */
    private def commonId(e: Expression, o: J.Obj): Unit = o.get("class") match {
      case Some(J.Str(SparkClasses.CommonExpressionDef)) | Some(J.Str(SparkClasses.CommonExpressionRef)) =>
        Reflect.call(e, "id").flatMap(i => Reflect.call(i, "id")).foreach {
          case n: java.lang.Long => o.put("commonId", n.longValue())
          case _ =>
        }
      case _ =>
    }

    private def sql(e: Expression): Option[String] = {
      var s = sqlTexts.get(e)
      if (s == null) {
        s = Try {
          val raw = e.sql
          val masked = if (maskLiterals) Redact.maskLiterals(raw) else raw
          Redact.truncate(Redact.text(masked, redaction), SqlMax)
        }.toOption.filter(_ != null)
        sqlTexts.put(e, s)
      }
      s
    }
  }
}

/**
 * `catalogString` of data types, kept across events (a type is a value: equal types have equal
 * strings), up to `Max` distinct types; the same columns' types recur in every event of a job.
 */
private[listener] object TypeNames {
  val Max = 4096
  private val names = new java.util.concurrent.ConcurrentHashMap[DataType, String]()

  def apply(t: DataType): String = {
    val s = names.get(t)
    if (s != null) s
    else {
      val n = t.catalogString
      if (names.size < Max) names.put(t, n)
      n
    }
  }
}
