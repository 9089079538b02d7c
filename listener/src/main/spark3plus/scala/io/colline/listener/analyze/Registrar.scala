package io.colline.listener.analyze

import java.io.File
import java.net.URI

import scala.util.Try
import scala.util.control.NonFatal

import org.apache.spark.sql.{SaveMode, SparkSession}
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.analysis.ResolvedNamespace
import org.apache.spark.sql.catalyst.catalog.{CatalogDatabase, CatalogStorageFormat, CatalogTable, CatalogTableType, TemporaryViewRelation}
import org.apache.spark.sql.catalyst.expressions.Alias
import org.apache.spark.sql.catalyst.plans.logical.{CacheTableAsSelect, CreateNamespace, DropNamespace, DropTable, LogicalPlan, Project, SetCatalogAndNamespace}
import org.apache.spark.sql.execution.command.{AlterTableAddColumnsCommand, AlterTableRenameCommand, AlterViewAsCommand, CreateDataSourceTableAsSelectCommand, CreateDataSourceTableCommand, CreateDatabaseCommand, CreateTableCommand, CreateTableLikeCommand, CreateViewCommand, DropDatabaseCommand, DropTableCommand, ResetCommand, SetCatalogCommand, SetCommand, SetNamespaceCommand}
import org.apache.spark.sql.internal.HiveSerDe
import org.apache.spark.sql.types.{ArrayType, DataType, MapType, MetadataBuilder, StructType}

import io.colline.listener.{Compat, HiveClasses, Nodes, Reflect}

/** Whether a statement's definition was registered in the request's session or the analyzer's catalog. */
private[listener] sealed trait Applying
/** Registered; `note` says where it differs from what running the statement would do (a LOCATION not used, …). */
private[listener] final case class Applied(note: String = "") extends Applying
private[listener] final case class NotApplied(reason: String) extends Applying
/** The statement defines nothing: analyzed only. */
private[listener] case object NoDefinition extends Applying

/**
 * Registers what a request's statements define, with the catalog API and from their analyzed
 * plans, never by running them: settings and the current database in the request's own session;
 * temporary views of the analyzed query; with the analyzer's own catalog (`root` defined),
 * databases, tables (their columns, as data), persistent views (their text, analyzed again when
 * read, as Spark does) and the table of a CTAS (its columns, no data).
 *
 * The guarantees, each checked here:
 *  - a database or table is created only at the analyzer's own location, inside `root` (its
 *    warehouse, inside its work directory); a LOCATION, a `path` option or any other option of
 *    the statement is not used;
 *  - a table is defined only for a file format (`FileFormats`) or Hive's built-in formats: a table
 *    of another source (JDBC, …) would be read (connected to) by the analysis of a statement reading it;
 *  - a request removes only what it created (`restore`, at its end); what was there when it
 *    started (the baseline: `--ddl`) is never changed or removed by it;
 *  - nothing is removed whose location is not inside `root`.
 */
private[listener] final class Registrar(session: SparkSession, root: Option[File]) {
  import Registrar._

  private val catalog = session.sessionState.catalog
  private def manager = session.sessionState.catalogManager
  private val own = root.isDefined
  private val initialConf: Map[String, String] = session.conf.getAll
  private val baseViews: Set[String] = globalViews.toSet
  private val baseDbs: Set[String] = if (own) listDbs.toSet else Set.empty
  private val baseTables: Set[(String, String)] =
    if (own) baseDbs.toSeq.flatMap(db => listTables(db).map(db -> _)).toSet else Set.empty
  /** With a metastore: the tables and views the request's statements create, kept for it (ScriptTables). */
  private val scripted = new ScriptTables
  if (!own) ScriptTables.attach(session, scripted)

  /** A table or view of the catalog, or one the request's statements created while the catalog is a metastore. */
  def metadata(id: TableIdentifier): Option[CatalogTable] =
    Try(catalog.getTableMetadata(id)).toOption.orElse(if (own) None else scripted.get(id))

  /** Whether a table is one the request's statements created while the catalog is a metastore. */
  def isScripted(id: TableIdentifier): Boolean = !own && scripted.get(id).isDefined

  private def exists(id: TableIdentifier): Boolean = catalog.tableExists(id) || isScripted(id)

  /** Registers what `plan` (an analyzed statement) defines, or says why not. */
  def register(plan: LogicalPlan): Applying = try plan match {
    // the request's session
    case c: SetCommand => c.kv match {
      case Some((k, Some(v))) => Settings.set(session, k, v)
      case _ => NoDefinition // SET, SET -v, SET k: they show settings
    }
    case c: ResetCommand => Settings.reset(session, c.config, initialConf)
    case c: SetCatalogAndNamespace => c.child match {
      case r: ResolvedNamespace =>
        manager.setCurrentCatalog(r.catalog.name())
        if (r.namespace.nonEmpty) manager.setCurrentNamespace(r.namespace.toArray)
        Applied()
      case _ => NotApplied("the namespace could not be told")
    }
    case c: SetNamespaceCommand => manager.setCurrentNamespace(c.namespace.toArray); Applied()
    case c: SetCatalogCommand => manager.setCurrentCatalog(c.catalogName); Applied()
    case c: CreateViewCommand if c.viewType != org.apache.spark.sql.catalyst.analysis.PersistedView =>
      tempView(c.name.table, aliased(c.plan, c.userSpecifiedColumns), global = isGlobal(c.viewType), c.replace, c.allowExisting)
    case c: CacheTableAsSelect => tempView(c.tempViewName, c.plan, global = false, replace = true, allowExisting = false)
    case c if Nodes.shortName(c) == "DropTempViewCommand" => dropTempView(c)
    case c: AlterViewAsCommand if isTempView(c.name) => tempView(c.name.table, c.query, global = c.name.database.isDefined, replace = true, allowExisting = false)

    // the analyzer's own catalog
    case _ if !own && Definers(Nodes.shortName(plan)) && !(ScriptDefiners(Nodes.shortName(plan)) || HiveClasses.isCtas(plan)) =>
      NotApplied(notWritten + ": only session statements and the tables and views the script creates are registered")
    case c: CreateNamespace => namespace(c.name) match {
      case Some(Seq(db)) => createDatabase(db, c.ifNotExists, c.properties)
      case _ => NotApplied(notSession)
    }
    case c: CreateDatabaseCommand =>
      createDatabase(c.databaseName, c.ifNotExists, c.props ++ c.path.map("location" -> _) ++ c.comment.map("comment" -> _))
    case c: DropNamespace => namespace(c.namespace) match {
      case Some(Seq(db)) => dropDatabase(db, c.ifExists, c.cascade)
      case _ => NotApplied(notSession)
    }
    case c: DropDatabaseCommand => dropDatabase(c.databaseName, c.ifExists, c.cascade)
    case c: CreateDataSourceTableCommand => createTable(c.table, c.ignoreIfExists)
    case c: CreateTableCommand => createTable(c.table, c.ignoreIfExists)
    case c: CreateTableLikeCommand => createTableLike(c)
    case c: CreateDataSourceTableAsSelectCommand => ctas(c.table, c.query, c.outputColumnNames, c.mode == SaveMode.Ignore)
    case c if HiveClasses.isCtas(c) =>
      (HiveClasses.table(c), HiveClasses.query(c)) match {
        case (Some(t), Some(q)) => ctas(t, q, HiveClasses.outputColumnNames(c), HiveClasses.mode(c).contains(SaveMode.Ignore))
        case _ => NotApplied("the CTAS's table could not be told")
      }
    case c: CreateViewCommand => persistentView(c)
    case c: AlterViewAsCommand => alterView(c)
    case c: DropTable => c.child match {
      case Compat.ResolvedIdent(cat, ident) if cat.name() == SessionCatalog && ident.namespace().length == 1 =>
        dropTable(TableIdentifier(ident.name(), Some(ident.namespace()(0))), c.ifExists)
      case _ => NotApplied(notSession)
    }
    case c: DropTableCommand => dropTable(c.tableName, c.ifExists)
    case c: AlterTableRenameCommand => rename(c.oldName, c.newName)
    case c: AlterTableAddColumnsCommand => addColumns(c.table, c.colsToAdd)
    case c => Allowlist.NotApplied.get(Nodes.shortName(c)).map(NotApplied).getOrElse(NoDefinition)
  } catch {
    case NonFatal(e) => NotApplied(Analyzer.head(String.valueOf(e.getMessage)))
  }

  // ---------------------------------------------------------------- the session

  private def aliased(plan: LogicalPlan, columns: Seq[(String, Option[String])]): LogicalPlan =
    if (columns.isEmpty) plan
    else {
      val list = plan.output.zip(columns).map {
        case (a, (name, None)) => Alias(a, name)()
        case (a, (name, Some(comment))) =>
          Alias(a, name)(explicitMetadata = Some(new MetadataBuilder().putString("comment", comment).build()))
      }
      session.sessionState.executePlan(Project(list, plan)).analyzed // analysis only
    }

  /** A temporary view of an analyzed plan, in the request's session (a global one is removed by `restore`). */
  private def tempView(name: String, plan: LogicalPlan, global: Boolean, replace: Boolean, allowExisting: Boolean): Applying = {
    val exists = if (global) catalog.getRawGlobalTempView(name).isDefined else catalog.getRawTempView(name).isDefined
    if (exists && global && baseViews(name.toLowerCase)) return NotApplied(s"global_temp.$name was there before this request: requests do not change it")
    if (exists && allowExisting) return Applied()
    val ident = TableIdentifier(name, if (global) Some(globalTempDatabase) else None)
    val meta = CatalogTable(
      identifier = ident,
      tableType = CatalogTableType.VIEW,
      storage = CatalogStorageFormat.empty,
      schema = plan.schema,
      properties = Map(CatalogTable.VIEW_STORING_ANALYZED_PLAN -> "true"))
    val view = TemporaryViewRelation(meta, Some(plan))
    if (global) catalog.createGlobalTempView(name, view, overrideIfExists = replace)
    else catalog.createTempView(name, view, overrideIfExists = replace)
    Applied()
  }

  private def dropTempView(c: LogicalPlan): Applying =
    Reflect.call(c, "ident").collect { case i: org.apache.spark.sql.connector.catalog.Identifier => i } match {
      case Some(i) if i.namespace().isEmpty => catalog.dropTempView(i.name()); Applied()
      case Some(i) if baseViews(i.name().toLowerCase) => NotApplied(s"global_temp.${i.name()} was there before this request: requests do not change it")
      case Some(i) => catalog.dropGlobalTempView(i.name()); Applied()
      case None => NotApplied("the view could not be told")
    }

  // ---------------------------------------------------------------- databases

  private def namespace(p: LogicalPlan): Option[Seq[String]] = p match {
    case r: ResolvedNamespace if r.catalog.name() == SessionCatalog => Some(r.namespace)
    case Compat.ResolvedDBObject(Seq(db)) => Some(Seq(db)) // CREATE DATABASE on 3.3
    case _ => None
  }

  private def createDatabase(name: String, ifNotExists: Boolean, props: Map[String, String]): Applying = {
    val db = name.toLowerCase
    if (!ValidName.pattern.matcher(db).matches()) return NotApplied(s"database name ${Tables.quoted(name)}: letters, digits and _ only")
    if (catalog.databaseExists(db)) {
      if (ifNotExists) return Applied()
      if (baseDbs(db)) return NotApplied(s"$db was there before this request: requests do not change it")
      return NotApplied(s"database $db already exists")
    }
    val location = new File(root.get, db + ".db").toURI
    val reserved = Set("location", "comment", "owner")
    catalog.createDatabase(CatalogDatabase(db, props.getOrElse("comment", ""), location, props.filterKeys(k => !reserved(k)).toMap),
      ignoreIfExists = ifNotExists)
    Applied(props.get("location").map(l => s"at the analyzer's own location: LOCATION ${Tables.quoted(l)} is not used").getOrElse(""))
  }

  private def dropDatabase(name: String, ifExists: Boolean, cascade: Boolean): Applying = {
    val db = name.toLowerCase
    if (baseDbs(db)) NotApplied(s"$db was there before this request: requests do not change it")
    else if (!catalog.databaseExists(db)) { if (ifExists) Applied() else NotApplied(s"database $db does not exist") }
    else if (!inside(catalog.getDatabaseMetadata(db).locationUri)) NotApplied(s"$db is not at the analyzer's own location: not removed")
    else { catalog.dropDatabase(db, ignoreIfNotExists = ifExists, cascade = cascade); Applied() }
  }

  // ---------------------------------------------------------------- tables and views

  private def qualify(id: TableIdentifier): Either[String, TableIdentifier] =
    if (Compat.tableCatalog(id).exists(_ != SessionCatalog)) Left(notSession)
    else Right(TableIdentifier(id.table.toLowerCase, Some(id.database.getOrElse(catalog.getCurrentDatabase).toLowerCase)))

  private def isBase(id: TableIdentifier): Boolean = baseTables((id.database.get, id.table))

  private def changeable(id: TableIdentifier): Either[String, TableIdentifier] = qualify(id).flatMap { q =>
    if (isBase(q)) Left(s"${q.unquotedString} was there before this request: requests do not change it") else Right(q)
  }

  /** A table from a statement's CatalogTable, at the analyzer's own location, with its columns and nothing else it says. */
  private def createTable(ct: CatalogTable, ignoreIfExists: Boolean, schema: Option[StructType] = None): Applying = {
    val id = changeable(ct.identifier) match { case Left(why) => return NotApplied(why); case Right(q) => q }
    val hive = ct.provider.exists(_.equalsIgnoreCase(HiveProvider))
    val provider = ct.provider.map(_.toLowerCase).getOrElse(session.conf.get("spark.sql.sources.default", "parquet").toLowerCase)
    if (!hive && !FileFormats(provider))
      return NotApplied(s"USING $provider: only tables of files (${FileFormats.toSeq.sorted.mkString(", ")}) or Hive formats are " +
        "defined; reading a table of another source would connect to it")
    val storage =
      if (!hive) CatalogStorageFormat.empty
      else {
        val classes = (ct.storage.serde ++ ct.storage.inputFormat ++ ct.storage.outputFormat).toSeq
        classes.find(c => !HiveFormats(c)) match {
          case Some(c) => return NotApplied(s"a Hive table with the class $c: only Hive's built-in formats (STORED AS ${HiveSerDe.serdeMap.keys.toSeq.sorted.mkString("|").toUpperCase}) are defined")
          case None => ct.storage.copy(locationUri = None, properties = ct.storage.properties - "path")
        }
      }
    val columns = schema.getOrElse(ct.schema)
    if (columns.isEmpty) return NotApplied("no columns: its columns would come from its files, which the analyzer does not read")
    if (exists(id)) {
      return if (ignoreIfExists) Applied() else NotApplied(s"${id.unquotedString} already exists")
    }
    val table = ct.copy(
      identifier = id,
      tableType = CatalogTableType.MANAGED,
      storage = storage,
      schema = if (hive) columns else nullable(columns).asInstanceOf[StructType],
      provider = Some(if (hive) HiveProvider else provider),
      tracksPartitionsInCatalog = if (hive) ct.tracksPartitionsInCatalog else ct.partitionColumnNames.nonEmpty)
    if (own) catalog.createTable(table, ignoreIfExists = ignoreIfExists, validateLocation = true)
    else keep(table.copy(storage = table.storage.copy(locationUri = Some(scratchDir().toURI)))) // Spark reads a Hive table's directory
    val options = if (hive) Map.empty[String, String] else ct.storage.properties - "path"
    val location = ct.storage.locationUri.map(u => if (u.getScheme == "file") u.getPath else u.toString).orElse(ct.storage.properties.get("path"))
    val unused = Seq(
      location.map(l => s"LOCATION ${Tables.quoted(l)} is not used"),
      if (options.nonEmpty) Some(s"OPTIONS (${options.keys.toSeq.sorted.mkString(", ")}) are not used") else None
    ).flatten
    val note = if (unused.isEmpty) "" else "at the analyzer's own location: " + unused.mkString("; ")
    Applied(if (own) note else Seq(KeptNote, note).filter(_.nonEmpty).mkString("; "))
  }

  private def createTableLike(c: CreateTableLikeCommand): Applying = {
    val source = Try(catalog.getTempViewOrPermanentTableMetadata(c.sourceTable)).toOption
      .orElse(qualify(c.sourceTable).toOption.filter(isScripted).flatMap(scripted.get)) // a table the script created
      .getOrElse(catalog.getTempViewOrPermanentTableMetadata(c.sourceTable)) // Spark's error
    val provider =
      if (c.provider.isDefined) c.provider
      else if (c.fileFormat.inputFormat.isDefined) Some(HiveProvider)
      else if (source.tableType == CatalogTableType.VIEW) Some(session.conf.get("spark.sql.sources.default", "parquet"))
      else source.provider
    createTable(CatalogTable(
      identifier = c.targetTable,
      tableType = CatalogTableType.MANAGED,
      storage = if (c.fileFormat.inputFormat.isDefined) c.fileFormat else source.storage.copy(locationUri = c.fileFormat.locationUri),
      schema = source.schema,
      provider = provider,
      partitionColumnNames = source.partitionColumnNames,
      bucketSpec = source.bucketSpec,
      properties = c.properties,
      tracksPartitionsInCatalog = source.tracksPartitionsInCatalog), c.ifNotExists)
  }

  /** A CTAS's table: its columns from the analyzed query's output, no data. */
  private def ctas(t: CatalogTable, query: LogicalPlan, names: Seq[String], ifNotExists: Boolean): Applying = {
    val schema = StructType(names.zip(query.output).map { case (n, a) =>
      org.apache.spark.sql.types.StructField(n, a.dataType, nullable = true, a.metadata)
    })
    createTable(t, ignoreIfExists = ifNotExists, schema = Some(schema))
  }

  private def persistentView(c: CreateViewCommand): Applying = {
    val id = changeable(c.name) match { case Left(why) => return NotApplied(why); case Right(q) => q }
    val text = c.originalText.getOrElse(return NotApplied("the view has no text"))
    if (!own && catalog.tableExists(id)) return if (c.allowExisting) Applied() else NotApplied(s"${id.unquotedString} is in the metastore, which the analyzer never writes to")
    if (isScripted(id)) {
      if (c.allowExisting) return Applied()
      if (scripted.get(id).exists(_.tableType != CatalogTableType.VIEW)) return NotApplied(s"${id.unquotedString} is a table, not a view")
      if (!c.replace) return NotApplied(s"${id.unquotedString} already exists")
    } else if (catalog.tableExists(id)) {
      val existing = catalog.getTableMetadata(id)
      if (c.allowExisting) return Applied()
      if (existing.tableType != CatalogTableType.VIEW) return NotApplied(s"${id.unquotedString} is a table, not a view")
      if (!c.replace) return NotApplied(s"${id.unquotedString} already exists")
      catalog.dropTable(id, ignoreIfNotExists = false, purge = false) // a view: no files
    }
    val plan = aliased(c.plan, c.userSpecifiedColumns)
    val view = CatalogTable(
      identifier = id,
      tableType = CatalogTableType.VIEW,
      storage = CatalogStorageFormat.empty,
      schema = plan.schema,
      properties = viewProperties(c.properties, c.plan.schema.fieldNames),
      viewOriginalText = Some(text),
      viewText = Some(text),
      comment = c.comment)
    if (own) { catalog.createTable(view, ignoreIfExists = false); Applied() }
    else { keep(view); Applied(KeptNote) }
  }

  /**
   * With a metastore: an empty directory of the analyzer's own for a table the script creates
   * (Spark's analysis lists a Hive table's files, and fails where there is no directory), in a
   * directory of the request's inside spark.local.dir, removed at its end.
   */
  private def scratchDir(): File = {
    if (scratch.isEmpty) {
      val local = Try(session.sparkContext.getConf.get("spark.local.dir")).getOrElse(System.getProperty("java.io.tmpdir"))
      val parent = new File(local.split(",").head.trim)
      parent.mkdirs()
      scratch = Some(java.nio.file.Files.createTempDirectory(parent.toPath, "colline-script-tables-").toFile)
    }
    val dir = new File(scratch.get, "t" + (scratch.get.list().length + 1))
    if (!dir.mkdir()) throw new IllegalStateException(s"cannot make the directory $dir")
    dir
  }
  private var scratch: Option[File] = None

  /** With a metastore: a table or view the script creates, kept for the request's later statements. */
  private def keep(t: CatalogTable): Unit = {
    scripted.put(t.copy(identifier = Compat.sessionTable(t.identifier.table, t.identifier.database.get)))
    catalog.invalidateCachedTable(t.identifier) // a relation Spark cached for a table of that name before
  }

  private def isTempView(name: TableIdentifier): Boolean =
    if (name.database.isEmpty) catalog.getRawTempView(name.table).isDefined
    else name.database.exists(_.equalsIgnoreCase(globalTempDatabase)) && catalog.getRawGlobalTempView(name.table).isDefined

  private def alterView(c: AlterViewAsCommand): Applying = {
    val id = changeable(c.name) match { case Left(why) => return NotApplied(why); case Right(q) => q }
    val existing = catalog.getTableMetadata(id)
    if (existing.tableType != CatalogTableType.VIEW) return NotApplied(s"${id.unquotedString} is not a view")
    catalog.alterTable(existing.copy(
      schema = c.query.schema,
      properties = viewProperties(existing.properties, c.query.schema.fieldNames),
      viewOriginalText = Some(c.originalText),
      viewText = Some(c.originalText)))
    Applied()
  }

  /** A persistent view's context, as Spark keeps it: current catalog and namespace, settings, the query's column names. */
  private def viewProperties(props: Map[String, String], queryOutput: Array[String]): Map[String, String] = {
    val kept = props.filterKeys(k => !k.startsWith(CatalogTable.VIEW_PREFIX)).toMap
    val confs = session.sessionState.conf.getAllConfs.filter { case (k, _) =>
      session.conf.isModifiable(k) && !ViewConfDenied.exists(k.startsWith)
    }
    kept ++
      CatalogTable.catalogAndNamespaceToProps(manager.currentCatalog.name(), manager.currentNamespace.toSeq) ++
      confs.map { case (k, v) => CatalogTable.VIEW_SQL_CONFIG_PREFIX + k -> v } ++
      Map(CatalogTable.VIEW_QUERY_OUTPUT_NUM_COLUMNS -> queryOutput.length.toString) ++
      queryOutput.zipWithIndex.map { case (n, i) => s"${CatalogTable.VIEW_QUERY_OUTPUT_COLUMN_NAME_PREFIX}$i" -> n }
  }

  private def dropTable(name: TableIdentifier, ifExists: Boolean): Applying = {
    val id = changeable(name) match { case Left(why) => return NotApplied(why); case Right(q) => q }
    if (!own) return {
      if (isScripted(id)) { scripted.remove(id); catalog.invalidateCachedTable(id); Applied() }
      else NotApplied(notWritten + ": only a table or view the script created is dropped")
    }
    if (!catalog.tableExists(id)) return if (ifExists) Applied() else NotApplied(s"${id.unquotedString} does not exist")
    val t = catalog.getTableMetadata(id)
    if (t.tableType != CatalogTableType.VIEW && !inside(t.location)) NotApplied(s"${id.unquotedString} is not at the analyzer's own location: not removed")
    else { catalog.dropTable(id, ignoreIfNotExists = true, purge = true); Applied() }
  }

  private def rename(from: TableIdentifier, to: TableIdentifier): Applying =
    if (from.database.isEmpty && catalog.getRawTempView(from.table).isDefined) { catalog.renameTable(from, to); Applied() }
    else changeable(from) match {
      case Left(why) => NotApplied(why)
      case Right(id) =>
        val t = catalog.getTableMetadata(id)
        if (t.tableType != CatalogTableType.VIEW && !inside(t.location)) NotApplied(s"${id.unquotedString} is not at the analyzer's own location")
        else { catalog.renameTable(id, to); Applied() }
    }

  private def addColumns(name: TableIdentifier, columns: Seq[org.apache.spark.sql.types.StructField]): Applying =
    changeable(name) match {
      case Left(why) => NotApplied(why)
      case Right(id) =>
        val t = catalog.getTableMetadata(id)
        catalog.alterTableDataSchema(id, StructType(t.dataSchema ++ columns))
        Applied()
    }

  /** Registers a table given as data (the request's `tables`). */
  def define(t: TableSpec): Applying = {
    if (!own) return NotApplied("the catalog is a metastore, which the analyzer never writes to")
    Tables.catalogTable(t, catalog.getCurrentDatabase) match {
      case Left(why) => NotApplied(why)
      case Right(ct) =>
        val db = ct.identifier.database.get.toLowerCase
        if (!catalog.databaseExists(db)) createDatabase(db, ifNotExists = true, Map.empty) match {
          case n: NotApplied => return n
          case _ =>
        }
        try createTable(ct, ignoreIfExists = false) catch {
          case NonFatal(e) => NotApplied(Analyzer.head(String.valueOf(e.getMessage)))
        }
    }
  }

  /**
   * Defines a table that Inference infers for this request, with its columns, at the analyzer's
   * own location; `again`: changes its columns (drops and defines it again). Its files are JSON:
   * the one file format that holds a column of no type yet (void), as Inference's columns are
   * until Spark's analysis types them.
   * None, or why the table cannot be defined.
   */
  def defineInferred(id: TableIdentifier, schema: StructType, again: Boolean): Option[String] = {
    if (!own) return Some("the catalog is a metastore, which the analyzer never writes to: tables cannot be inferred")
    val db = id.database.get
    if (again && catalog.tableExists(id) && !isBase(id)) {
      // defined anew rather than altered: a Hive metastore refuses a type change at a position, and
      // a column named earlier in the SQL may be found later
      Try(catalog.dropTable(id, ignoreIfNotExists = true, purge = true)).failed.toOption match {
        case Some(e) => return Some(s"it cannot be redefined: ${e.getMessage}")
        case None =>
      }
    }
    if (!catalog.databaseExists(db)) createDatabase(db, ifNotExists = true, Map.empty) match {
      case NotApplied(why) => return Some(why)
      case _ =>
    }
    createTable(CatalogTable(identifier = id, tableType = CatalogTableType.MANAGED, storage = CatalogStorageFormat.empty,
      schema = schema, provider = Some(Registrar.InferredProvider)), ignoreIfExists = false) match {
      case NotApplied(why) => Some(why)
      case _ => catalog.invalidateCachedTable(id); None
    }
  }

  // ---------------------------------------------------------------- the end of a request

  /** Removes what the request added: global temporary views, databases, tables (never what lies outside `root`). */
  def restore(): Unit = {
    if (!own) ScriptTables.detach(session)
    scratch.foreach { d =>
      // the empty directories of the script's tables, nothing else: Spark never wrote into them
      Option(d.listFiles()).foreach(_.foreach(_.delete()))
      d.delete()
    }
    scratch = None
    globalViews.filterNot(baseViews).foreach(v => Try(catalog.globalTempViewManager.remove(v)))
    if (own) listDbs.foreach { db =>
      if (!baseDbs(db)) {
        if (Try(inside(catalog.getDatabaseMetadata(db).locationUri)).getOrElse(false))
          Try(catalog.dropDatabase(db, ignoreIfNotExists = true, cascade = true))
        else System.err.println(s"colline analyze: database $db is not inside ${root.get}: left in place, not removed")
      } else listTables(db).foreach { t =>
        if (!baseTables((db, t))) {
          val id = TableIdentifier(t, Some(db))
          val meta = Try(catalog.getTableMetadata(id)).toOption
          if (meta.exists(m => m.tableType == CatalogTableType.VIEW || inside(m.location)))
            Try(catalog.dropTable(id, ignoreIfNotExists = true, purge = true))
          else System.err.println(s"colline analyze: table $db.$t is not inside ${root.get}: left in place, not removed")
        }
      }
    }
  }

  /** Whether a location is a local path strictly inside `root`. */
  def inside(uri: URI): Boolean = root.exists { r =>
    Try {
      val scheme = Option(uri.getScheme).getOrElse("file")
      scheme == "file" && {
        val path = new File(new URI("file", null, uri.getPath, null)).getCanonicalPath
        path.startsWith(r.getCanonicalPath + File.separator)
      }
    }.getOrElse(false)
  }

  private def globalTempDatabase: String = session.conf.get("spark.sql.globalTempDatabase", "global_temp").toLowerCase
  private def globalViews: Seq[String] = Try(catalog.globalTempViewManager.listViewNames("*")).getOrElse(Nil).map(_.toLowerCase)
  private def listDbs: Seq[String] = catalog.listDatabases().map(_.toLowerCase)
  private def listTables(db: String): Seq[String] = catalog.externalCatalog.listTables(db).map(_.toLowerCase)
  private def isGlobal(viewType: AnyRef): Boolean = Nodes.shortName(viewType) == "GlobalTempView"
}

private[listener] object Registrar {
  val SessionCatalog = "spark_catalog"
  val HiveProvider = "hive"
  /** The format of an inferred table's (never written) files: JSON holds columns of no type yet (void), Parquet does not. */
  val InferredProvider = "json"
  /** Data sources a table may use: files, which the analysis of a read lists (in the analyzer's own location) and never opens. */
  val FileFormats: Set[String] = Set("parquet", "orc", "csv", "json", "text", "avro")
  /** Hive's built-in SerDes and formats (STORED AS …). */
  val HiveFormats: Set[String] = HiveSerDe.serdeMap.values.flatMap(s => s.serde ++ s.inputFormat ++ s.outputFormat).toSet
  private val ValidName = "[a-z0-9_]+".r
  private val notSession = "only the session catalog (spark_catalog) is the analyzer's own: not registered"
  private val notWritten = "the catalog is a metastore, which the analyzer never writes to"
  /** The note of a table or view a script creates while the catalog is a metastore. */
  val KeptNote = "kept for this request's later statements, not written to the metastore"
  /** Analyzed roots whose table or view is kept for the request when the catalog is a metastore (ScriptTables), and the DROP of one. */
  private val ScriptDefiners: Set[String] = Set("CreateDataSourceTableCommand", "CreateTableCommand", "CreateTableLikeCommand",
    "CreateDataSourceTableAsSelectCommand", "CreateViewCommand", "DropTable", "DropTableCommand")
  /** Settings a view does not keep (Spark's ViewHelper leaves the same out). */
  private val ViewConfDenied = Seq("spark.sql.optimizer.", "spark.sql.codegen.", "spark.sql.execution.", "spark.sql.shuffle.",
    "spark.sql.adaptive.", "spark.sql.hive.convertMetastore", "spark.sql.view.maxNestedViewDepth")
  /** Analyzed roots that define something in the catalog: with a metastore, none is registered. */
  val Definers: Set[String] = Set("CreateNamespace", "CreateDatabaseCommand", "DropNamespace", "DropDatabaseCommand",
    "CreateDataSourceTableCommand", "CreateTableCommand", "CreateTableLikeCommand", "CreateDataSourceTableAsSelectCommand",
    "CreateHiveTableAsSelectCommand", "OptimizedCreateHiveTableAsSelectCommand", "CreateViewCommand", "AlterViewAsCommand",
    "DropTable", "DropTableCommand", "AlterTableRenameCommand", "AlterTableAddColumnsCommand")

  /** A type with every field, element and value nullable: how Spark stores a file table's columns. */
  def nullable(dt: DataType): DataType = dt match {
    case s: StructType => StructType(s.fields.map(f => f.copy(dataType = nullable(f.dataType), nullable = true)))
    case a: ArrayType => ArrayType(nullable(a.elementType), containsNull = true)
    case m: MapType => MapType(nullable(m.keyType), nullable(m.valueType), valueContainsNull = true)
    case other => other
  }
}
