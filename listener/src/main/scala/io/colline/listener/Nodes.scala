package io.colline.listener

import scala.util.Try

import org.apache.spark.sql.SaveMode
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.catalog.{CatalogTable, HiveTableRelation}
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression}
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.execution.{ExternalRDD, LogicalRDD}
import org.apache.spark.sql.execution.command.{AlterTableRenameCommand, AlterViewAsCommand, CreateDataSourceTableAsSelectCommand, DropTableCommand, InsertIntoDataSourceDirCommand, LoadDataCommand, TruncateTableCommand}
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, InsertIntoDataSourceCommand, InsertIntoHadoopFsRelationCommand, LogicalRelation, SaveIntoDataSourceCommand}
import org.apache.spark.sql.sources.{BaseRelation, DataSourceRegister}

/** Where a write command's written plan is: a child by position, or a nested plan by role. */
private[listener] sealed trait QueryRef
private[listener] final case class ChildQuery(index: Int) extends QueryRef
private[listener] final case class NestedQuery(role: String) extends QueryRef

private[listener] final case class WriteSpec(
    dataset: J.Obj,
    mode: String,
    columns: Seq[String],
    partitionColumns: Seq[String],
    query: Option[QueryRef])

/** What the serializer needs to know about one node beyond children and output. */
private[listener] final case class NodeInfo(
    exprs: Seq[(String, Seq[Expression])] = Nil,
    args: Seq[(String, J)] = Nil,
    nested: Seq[(String, LogicalPlan)] = Nil,
    dataset: Option[J.Obj] = None,
    write: Option[WriteSpec] = None,
    ddl: Option[J.Obj] = None)

private[listener] object Nodes {
  val SessionCatalog = "spark_catalog"

  // ---------------------------------------------------------------- datasets

  def tableDataset(ct: CatalogTable, fallbackLocation: Option[String] = None): J.Obj = {
    val id = ct.identifier
    val t = J.obj(
      "kind" -> J.Str("table"),
      "catalog" -> J.Str(Compat.tableCatalog(id).getOrElse(SessionCatalog)),
      "namespace" -> J.strs(id.database.toSeq),
      "name" -> J.Str(id.table),
      "provider" -> J.opt(ct.provider),
      "location" -> J.opt(ct.storage.locationUri.map(u => Redact.uri(u.toString)).orElse(fallbackLocation)),
      "tableType" -> J.Str(ct.tableType.name),
      "columnComments" -> tagComments(ct),
      "tagProperties" -> tagProperties(ct))
    Tables.learn(t)
    t
  }

  /** Tags in the catalog (1.5, docs/tags.md): the column comments that hold one (`#key`), always sent, maybe empty. */
  private def tagComments(ct: CatalogTable): J.Obj = {
    val o = J.obj()
    Try(ct.schema.fields.foreach(f => f.getComment().filter(_.contains('#')).foreach(c => o.put(f.name, c.take(MaxTagText)))))
    o
  }

  /** Tags in the catalog (1.5): the table properties `colline.tags.<column>`, and no other property. */
  private def tagProperties(ct: CatalogTable): J.Obj = {
    val o = J.obj()
    Try(ct.properties.foreach { case (k, v) => if (k.startsWith(TagPropertyPrefix)) o.put(k, String.valueOf(v).take(MaxTagText)) })
    o
  }

  private val TagPropertyPrefix = "colline.tags."
  private val MaxTagText = 1000

  def pathDataset(format: String, paths: Seq[String]): J.Obj =
    J.obj("kind" -> J.Str("path"), "format" -> J.str(format), "paths" -> J.strs(paths.map(Redact.uri)))

  /**
   * A relation or write named by path: the catalog table at that path where the catalog knows it
   * (Tables: a Delta table written by name and read by path is one dataset), else the path.
   */
  def dataAtPath(format: String, paths: Seq[String]): J.Obj = paths match {
    case Seq(p) => Tables.atPath(p).getOrElse(pathDataset(format, paths))
    case _ => pathDataset(format, paths)
  }

  def jdbcDataset(url: Option[String], table: Option[String], query: Option[String]): J.Obj = {
    val o = J.obj("kind" -> J.Str("jdbc"), "url" -> J.opt(url.map(Redact.jdbcUrl)))
    table.foreach(t => o.put("table", t))
    if (table.isEmpty) query.foreach(q => o.put("query", q))
    o
  }

  def kafkaDataset(servers: Option[String], topics: Seq[String], pattern: Option[String]): J.Obj = {
    val o = J.obj("kind" -> J.Str("kafka"), "servers" -> J.opt(servers))
    if (topics.nonEmpty || pattern.isEmpty) o.put("topics", J.strs(topics))
    pattern.foreach(p => o.put("pattern", p))
    o
  }

  def viewDataset(ct: CatalogTable, temporary: Boolean): J.Obj = {
    val id = ct.identifier
    J.obj(
      "kind" -> J.Str("view"),
      "catalog" -> J.Str(Compat.tableCatalog(id).getOrElse(SessionCatalog)),
      "namespace" -> J.strs(id.database.toSeq),
      "name" -> J.Str(id.table),
      "temporary" -> J.Bool(temporary))
  }

  def local: J.Obj = J.obj("kind" -> J.Str("local"))
  def rdd: J.Obj = J.obj("kind" -> J.Str("rdd"))
  def other(description: String): J.Obj = J.obj("kind" -> J.Str("other"), "description" -> J.str(description))

  def formatName(f: AnyRef): String = f match {
    case d: DataSourceRegister => Try(d.shortName()).getOrElse(f.getClass.getName)
    case null => null
    case _ => f.getClass.getName
  }

  private def rootPaths(h: HadoopFsRelation): Seq[String] =
    Try(h.location.rootPaths.map(_.toString)).getOrElse(Nil)

  /** Identity of a relation behind a LogicalRelation (or an InsertIntoDataSourceCommand). */
  def relationDataset(r: BaseRelation, catalogTable: Option[CatalogTable]): J.Obj = {
    catalogTable match {
      case Some(ct) =>
        val loc = r match {
          case h: HadoopFsRelation => rootPaths(h).headOption.map(Redact.uri)
          case _ => None
        }
        tableDataset(ct, loc)
      case None =>
        r match {
          case h: HadoopFsRelation => dataAtPath(formatName(h.fileFormat), rootPaths(h))
          case _ =>
            JdbcClasses.relation(r).map { case (u, t, q) => jdbcDataset(u, t, q) }
              .orElse(KafkaClasses.relation(r).map { case (s, t, p) => kafkaDataset(s, t, p) })
              .getOrElse(other(r.getClass.getName))
        }
    }
  }


  /** Identity of a leaf, if it is one we know. */
  def leafDataset(p: LogicalPlan): Option[J.Obj] = p match {
    case r: HiveTableRelation => Some(tableDataset(r.tableMeta))
    case r: LogicalRelation => Some(relationDataset(r.relation, r.catalogTable))
    case _: LocalRelation | _: OneRowRelation | _: Range => Some(local)
    case _: LogicalRDD | _: ExternalRDD[_] => Some(rdd)
    case Versioned.Leaf(ds) => Some(ds)
    case _ => None
  }

  // ---------------------------------------------------------------- writes

  def modeName(m: AnyRef): String = m match {
    case SaveMode.Append => "append"
    case SaveMode.Overwrite => "overwrite"
    case SaveMode.ErrorIfExists => "errorIfExists"
    case SaveMode.Ignore => "ignore"
    case other => String.valueOf(other)
  }

  /** CTAS modes: ErrorIfExists / Ignore create the table, Overwrite replaces it. */
  def ctasMode(m: AnyRef): String = m match {
    case SaveMode.Overwrite => "replace"
    case SaveMode.Append => "append"
    case _ => "create"
  }

  def names(as: Seq[Attribute]): Seq[String] = as.map(_.name)

  def childIndexOf(p: LogicalPlan, q: LogicalPlan): Option[Int] = {
    val i = p.children.indexWhere(_ eq q)
    if (i >= 0) Some(i) else None
  }

  // ---------------------------------------------------------------- per node

  def describe(p: LogicalPlan): NodeInfo = p match {
    case Versioned.Described(info) => info // the nodes of one Spark line or more (Versioned.scala)
    // ---- operators
    case n: Project => NodeInfo(exprs = Seq("projectList" -> n.projectList))
    case n: Filter => NodeInfo(exprs = Seq("condition" -> Seq(n.condition)))
    case n: Aggregate => NodeInfo(exprs = Seq(
      "groupingExpressions" -> n.groupingExpressions, "aggregateExpressions" -> n.aggregateExpressions))
    case n: Window => NodeInfo(exprs = Seq("windowExpressions" -> n.windowExpressions,
      "partitionSpec" -> n.partitionSpec, "orderSpec" -> n.orderSpec))
    case n: Join => NodeInfo(
      exprs = Seq("condition" -> n.condition.toSeq),
      args = Seq("joinType" -> J.Str(shortName(n.joinType))))
    case n: Sort => NodeInfo(exprs = Seq("order" -> n.order), args = Seq("global" -> J.Bool(n.global)))
    case n: Generate => NodeInfo(
      exprs = Seq("generator" -> Seq(n.generator), "generatorOutput" -> n.generatorOutput),
      args = Seq("outer" -> J.Bool(n.outer)))
    case n: Expand => NodeInfo(exprs = n.projections.zipWithIndex.map { case (row, i) => s"projections.$i" -> row })
    case n: Intersect => NodeInfo(args = Seq("isAll" -> J.Bool(n.isAll)))
    case n: Except => NodeInfo(args = Seq("isAll" -> J.Bool(n.isAll)))
    case n: RepartitionByExpression => NodeInfo(exprs = Seq("partitionExpressions" -> n.partitionExpressions))
    case n: SubqueryAlias => NodeInfo(args = Seq("alias" -> J.Str(n.alias)))
    case RowLevel.Described(info) => info // ReplaceData, WriteDelta, MergeRows (RowLevel.scala)
    case DeltaCommands.Described(info) => info // Delta's MERGE / UPDATE / DELETE (Delta.scala)
    // recursive CTEs (4.x; absent from 3.x, hence by name): the loop id ties a reference to its loop
    case n if SparkClasses.is(n, SparkClasses.UnionLoop) =>
      NodeInfo(exprs = generic(n), args = Reflect.call(n, "id").map(id => "loopId" -> J.Str(id.toString)).toSeq)
    case n if SparkClasses.is(n, SparkClasses.UnionLoopRef) =>
      NodeInfo(args = Reflect.call(n, "loopId").map(id => "loopId" -> J.Str(id.toString)).toSeq)

    // ---- v1 file / catalog writes
    case c: InsertIntoHadoopFsRelationCommand =>
      val ds = c.catalogTable match {
        case Some(ct) => tableDataset(ct, Option(c.outputPath).map(op => Redact.uri(op.toString)))
        case None => dataAtPath(formatName(c.fileFormat), Option(c.outputPath).map(_.toString).toSeq)
      }
      NodeInfo(exprs = generic(c), write = Some(WriteSpec(ds, modeName(c.mode), c.outputColumnNames,
        names(c.partitionColumns), Some(ChildQuery(0)))))
    case c: CreateDataSourceTableAsSelectCommand =>
      val q = childIndexOf(c, c.query).map(ChildQuery).getOrElse(NestedQuery("query"))
      NodeInfo(
        nested = if (q.isInstanceOf[NestedQuery]) Seq("query" -> c.query) else Nil,
        write = Some(WriteSpec(tableDataset(c.table), ctasMode(c.mode), c.outputColumnNames,
          c.table.partitionColumnNames, Some(q))))
    case c: SaveIntoDataSourceCommand =>
      NodeInfo(nested = Seq("query" -> c.query),
        write = Some(WriteSpec(saveIntoDataset(c), modeName(c.mode), names(c.query.output), Nil,
          Some(NestedQuery("query")))))
    case c: InsertIntoDataSourceCommand =>
      NodeInfo(nested = Seq("table" -> c.logicalRelation, "query" -> c.query),
        write = Some(WriteSpec(relationDataset(c.logicalRelation.relation, c.logicalRelation.catalogTable),
          if (c.overwrite) "overwrite" else "append", names(c.logicalRelation.output), Nil,
          Some(NestedQuery("query")))))
    case c: InsertIntoDataSourceDirCommand =>
      NodeInfo(nested = Seq("query" -> c.query),
        write = Some(WriteSpec(pathDataset(c.provider, c.storage.locationUri.map(_.toString).toSeq),
          if (c.overwrite) "overwrite" else "errorIfExists", names(c.query.output), Nil,
          Some(NestedQuery("query")))))

    // ---- views
    case c: AlterViewAsCommand =>
      val ds = J.obj(
        "kind" -> J.Str("view"),
        "catalog" -> J.Str(Compat.tableCatalog(c.name).getOrElse(SessionCatalog)),
        "namespace" -> J.strs(c.name.database.toSeq),
        "name" -> J.Str(c.name.table),
        "temporary" -> J.Bool(c.name.database.isEmpty))
      NodeInfo(nested = Seq("query" -> c.query),
        write = Some(WriteSpec(ds, "replace", names(c.query.output), Nil, Some(NestedQuery("query")))))


    // ---- Hive (optional classes)
    case c if HiveClasses.isInsert(c) =>
      val ds = HiveClasses.table(c).map(tableDataset(_)).getOrElse(other(c.getClass.getName))
      NodeInfo(exprs = generic(c), write = Some(WriteSpec(ds, if (HiveClasses.overwrite(c)) "overwrite" else "append",
        HiveClasses.outputColumnNames(c), HiveClasses.table(c).map(_.partitionColumnNames).getOrElse(Nil),
        Some(ChildQuery(0)))))
    case c if HiveClasses.isCtas(c) =>
      val query = HiveClasses.query(c)
      val q: Option[QueryRef] = query.map(qp => childIndexOf(c, qp).map(ChildQuery).getOrElse(NestedQuery("query")))
      val ds = HiveClasses.table(c).map(tableDataset(_)).getOrElse(other(c.getClass.getName))
      NodeInfo(
        nested = q.collect { case NestedQuery(r) => r -> query.get }.toSeq,
        write = Some(WriteSpec(ds, HiveClasses.mode(c).map(ctasMode).getOrElse("create"),
          HiveClasses.outputColumnNames(c), HiveClasses.table(c).map(_.partitionColumnNames).getOrElse(Nil), q)))
    case c if HiveClasses.isInsertDir(c) =>
      val paths = HiveClasses.storage(c).flatMap(_.locationUri).map(_.toString).toSeq
      NodeInfo(write = Some(WriteSpec(pathDataset("hive", paths),
        if (HiveClasses.overwrite(c)) "overwrite" else "errorIfExists", HiveClasses.outputColumnNames(c), Nil,
        Some(ChildQuery(0)))))

    // ---- DDL that changes a dataset's identity (event format 1.1: `ddl`)
    case c: DropTableCommand => ddl("drop", v1Ident(c.tableName, c.isView).map(forgotten))
    case c: AlterTableRenameCommand =>
      // the new name may be unqualified: Spark renames within the old database
      val to = TableIdentifier(c.newName.table, c.newName.database.orElse(c.oldName.database))
      ddl("rename", v1Ident(c.oldName, c.isView).map(forgotten), "to" -> v1Ident(to, c.isView))
    case c: TruncateTableCommand => ddl("truncate", v1Ident(c.tableName, isView = false))
    case c: LoadDataCommand =>
      ddl("load", v1Ident(c.table, isView = false), "source" -> Some(pathDataset("load", Seq(loadPath(c.path, c.isLocal)))),
        "overwrite" -> Some(J.Bool(c.isOverwrite)))

    // ---- leaves and everything else
    case leaf if leaf.children.isEmpty && leafDataset(leaf).isDefined =>
      NodeInfo(dataset = leafDataset(leaf)) // a leaf's expressions are its output attributes
    case _ =>
      NodeInfo(exprs = generic(p), nested = innerPlans(p))
  }

  /**
   * A DDL node: the action, the dataset it changes, and extra identities (`to` of a rename,
   * `source` path of a LOAD DATA). Nothing when the dataset is not one (a temporary view).
   */
  def ddl(action: String, ds: Option[J.Obj], extra: (String, Option[J])*): NodeInfo = ds match {
    case None => NodeInfo()
    case Some(d) =>
      val o = J.obj("action" -> J.Str(action), "dataset" -> d)
      extra.foreach { case (k, v) => v.foreach(o.put(k, _)) }
      NodeInfo(ddl = Some(o))
  }

  /** A table dropped or renamed: its location names it no longer (Tables). */
  def forgotten(table: J.Obj): J.Obj = { Tables.forget(table); table }

  /**
   * A session-catalog identifier. An unqualified one names a temporary view, one in the global
   * temporary database a global temporary view: neither is a dataset.
   */
  private def v1Ident(id: TableIdentifier, isView: Boolean): Option[J.Obj] =
    if (id.database.isEmpty || id.database.exists(_.equalsIgnoreCase(globalTempDatabase))) None
    else {
      val o = J.obj(
        "kind" -> J.Str(if (isView) "view" else "table"),
        "catalog" -> J.Str(Compat.tableCatalog(id).getOrElse(SessionCatalog)),
        "namespace" -> J.strs(id.database.toSeq),
        "name" -> J.Str(id.table))
      if (isView) o.put("temporary", false)
      Some(o)
    }


  private def globalTempDatabase: String =
    Try(org.apache.spark.sql.SparkSession.active.conf.get("spark.sql.globalTempDatabase")).getOrElse("global_temp")

  /** The qualified URI of a LOAD DATA path (a LOCAL path is on the driver's file system). */
  private def loadPath(path: String, isLocal: Boolean): String = Try {
    val p = new org.apache.hadoop.fs.Path(path)
    if (p.toUri.getScheme != null) path
    else if (isLocal) new java.io.File(path).getAbsoluteFile.toURI.toString.stripSuffix("/")
    else {
      val conf = org.apache.spark.sql.SparkSession.active.sessionState.newHadoopConf()
      p.getFileSystem(conf).makeQualified(p).toString
    }
  }.map(Redact.uri).getOrElse(path)

  /** Any node: all of its expressions under the role `expressions`. */
  def generic(p: LogicalPlan): Seq[(String, Seq[Expression])] = {
    val es = Try(p.expressions).getOrElse(Nil)
    if (es.isEmpty) Nil else Seq("expressions" -> es)
  }

  /** Nested non-child plans of an unknown node (innerChildren that are not subquery plans). */
  def innerPlans(p: LogicalPlan): Seq[(String, LogicalPlan)] = Try {
    val subqueryPlans = p.subqueries
    Compat.innerChildren(p).collect { case lp: LogicalPlan if !subqueryPlans.exists(_ eq lp) && !p.children.exists(_ eq lp) => lp }
      .zipWithIndex.map { case (lp, i) => s"innerChildren.$i" -> lp }
  }.getOrElse(Nil)


  private def saveIntoDataset(c: SaveIntoDataSourceCommand): J.Obj = {
    val provider = c.dataSource.getClass.getName
    val get = (k: String) => c.options.collectFirst { case (kk, v) if kk.equalsIgnoreCase(k) => v }
    if (provider == SparkClasses.JdbcProvider) jdbcDataset(get("url"), get("dbtable"), get("query"))
    else if (provider == SparkClasses.KafkaProvider)
      kafkaDataset(get("kafka.bootstrap.servers"), get("topic").toSeq, None)
    else get("path").map(p => dataAtPath(formatName(c.dataSource), Seq(p)))
      .getOrElse(other(formatName(c.dataSource)))
  }


  /** Short class name without the Scala `$` of objects. */
  def shortName(o: AnyRef): String = ShortNames.get(o.getClass)

  /** Per class, computed once (a class's name does not change; ClassValue does not keep classes alive). */
  private object ShortNames extends ClassValue[String] {
    override protected def computeValue(c: Class[_]): String = {
      val n = c.getName
      n.substring(n.lastIndexOf('.') + 1).stripSuffix("$").split('$').last
    }
  }
}
