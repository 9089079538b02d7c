package io.colline.listener.analyze

import java.util.concurrent.atomic.AtomicLong

import scala.util.Try
import scala.util.control.NonFatal

import org.apache.spark.sql.{AnalysisException, SparkSession}
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.analysis.{PersistedView, ResolvedNamespace}
import org.apache.spark.sql.catalyst.parser.ParseException
import org.apache.spark.sql.catalyst.plans.logical.{CacheTableAsSelect, Command, CreateNamespace, DropNamespace, LogicalPlan, WithCTE}
import org.apache.spark.sql.execution.CommandExecutionMode
import org.apache.spark.sql.execution.command.{CreateDatabaseCommand, CreateDataSourceTableCommand, CreateTableCommand, CreateTableLikeCommand, CreateViewCommand, DropDatabaseCommand, DropTableCommand}
import org.apache.spark.sql.types.{StructField, StructType}

import io.colline.listener.{ChildQuery, Compat, Config, Event, EventBuilder, J, NestedQuery, Nodes, Pending, Redact, Seal, Skipped, Versions}

/** A named SQL text: a file to analyze, or schema statements to apply. */
private[listener] final case class Part(name: String, sql: String)

/**
 * One analysis: schema parts applied first (never published), then the files, statement by
 * statement, in one fresh session. `app` and `namespace` name the job the events belong to;
 * `reads` also publishes plain queries (as the listener's `publishReads`); `conf` is set on the
 * session first.
 */
private[listener] final case class Request(
    app: String = "colline-analyze",
    namespace: String = "default",
    reads: Boolean = false,
    conf: Seq[(String, String)] = Nil,
    schema: Seq[Part] = Nil,
    files: Seq[Part] = Nil)

/**
 * Parses and analyzes SQL with Spark — never optimizes, plans or executes it — and turns each
 * statement into the event the listener would publish for it, marked `analyzed`, through the
 * listener's own serializer (EventBuilder) and its last steps (Seal: scrub, size cap).
 *
 * What is applied: statements that only change the analyzing session (SET, USE, temporary views,
 * session variables) are applied, in the request's own session, so that later statements see
 * them. When the catalog is the analyzer's own (`ownCatalog`, never a user's metastore), the
 * statements that define datasets are applied to it as well — CREATE DATABASE / TABLE / VIEW,
 * the table of a CTAS (its schema, no data), and DROPs of what the request itself created — so a
 * job that creates a staging table and then reads it can be analyzed. Nothing a request defines
 * outlives it: the objects that were not in the catalog when it started are dropped at its end,
 * and an object that was there (the loaded schema) is never changed or dropped by a request.
 * With a user's metastore nothing is written to it, by construction: no statement that reaches
 * the catalog is applied. Requests are served one at a time.
 */
private[listener] final class Analyzer(base: SparkSession, val ownCatalog: Boolean, cfg: Config) {
  private val executions = new AtomicLong
  private lazy val appId = Try(base.sparkContext.applicationId).getOrElse("colline-analyze")
  private lazy val user = Try(base.sparkContext.sparkUser).getOrElse(null)

  /** Applies schema statements to the analyzer's catalog for good (the baseline of every request). */
  def load(parts: Seq[Part]): J.Arr = synchronized {
    if (!ownCatalog && parts.nonEmpty) throw new IllegalArgumentException(Analyzer.NotOwn)
    val session = base.newSession()
    J.arr(parts.map(p => schemaPart(session, p, new Baseline(session, own = true))))
  }

  def run(req: Request): J.Obj = synchronized {
    if (!ownCatalog && req.schema.nonEmpty) throw new IllegalArgumentException(Analyzer.NotOwn)
    val session = base.newSession()
    req.conf.foreach { case (k, v) => session.conf.set(k, v) }
    val baseline = new Baseline(session, ownCatalog)
    val c = cfg.copy(namespace = req.namespace, publishReads = req.reads)
    try {
      val schema = J.arr(req.schema.map(p => schemaPart(session, p, baseline)))
      val files = J.arr(req.files.map { f =>
        J.obj("name" -> J.Str(f.name), "statements" -> J.arr(Statements.split(f.sql).map(analyze(session, _, req, c, baseline))))
      })
      J.obj("schema" -> schema, "files" -> files)
    } finally baseline.restore()
  }

  private def schemaPart(session: SparkSession, p: Part, baseline: Baseline): J.Obj = {
    val results = Statements.split(p.sql).map { st =>
      val r = result(st)
      stage(session, st, r).foreach { plan =>
        define(session, st, plan, baseline, schema = true) match {
          case Applied => r.put("outcome", "applied")
          case NotApplied(why) => r.put("outcome", "skipped"); r.put("reason", why)
          case NoDefinition => r.put("outcome", "skipped"); r.put("reason", "not a schema statement")
        }
      }
      r
    }
    J.obj("name" -> J.Str(p.name), "statements" -> J.arr(results))
  }

  /** One statement: parsed, analyzed, serialized; applied when it defines something (see above). */
  private def analyze(session: SparkSession, st: Statement, req: Request, c: Config, baseline: Baseline): J.Obj = {
    val r = result(st)
    val t0 = System.nanoTime()
    val cpu0 = Analyzer.cpuNanos()
    stage(session, st, r).foreach { plan =>
      val analyzedNs = System.nanoTime() - t0
      val analyzedCpuNs = Analyzer.cpuNanos() - cpu0
      val redaction = Try(session.sessionState.conf.stringRedactionPattern).toOption.flatten
      def pending(pl: LogicalPlan) = Pending(
        funcName = if (Analyzer.isCommand(pl)) "command" else "query",
        plan = pl,
        qeId = executions.incrementAndGet(),
        success = true,
        error = None,
        durationNs = None,
        endedAtMs = System.currentTimeMillis(),
        appId = appId,
        appName = req.app,
        user = user,
        redaction = redaction,
        analyzed = true)
      try {
        if (!Analyzer.isCommand(plan) && !req.reads) { // as the listener: plain queries only with `reads`
          r.put("outcome", "skipped")
          r.put("reason", "query")
        } else {
          // as Spark runs it: one execution (one listener event) per command it executes
          val built = Analyzer.executions(plan).map(pl => EventBuilder.build(pending(pl), None, c))
          val events = new J.Arr
          var degraded = 0
          val skipped = built.collect {
            case Skipped(reason) => reason
            case Event(json, _, _) =>
              val (bytes, level) = Seal(json, c.maxEventBytes)
              if (bytes.length > c.maxEventBytes) "oversize"
              else { events.add(json); degraded = math.max(degraded, level); null }
          }.filter(_ != null)
          if (events.isEmpty) {
            r.put("outcome", "skipped")
            r.put("reason", skipped.headOption.getOrElse("noLineage"))
          } else {
            r.put("outcome", "event")
            r.put("events", events)
            if (degraded > 0) r.put("degraded", degraded.toLong)
          }
        }
      } catch {
        case NonFatal(e) => error(r, st, "event", e)
      }
      r.put("analyzeMicros", analyzedNs / 1000)
      if (cpu0 >= 0) r.put("analyzeCpuMicros", analyzedCpuNs / 1000)
      r.put("eventMicros", (System.nanoTime() - t0 - analyzedNs) / 1000)
      define(session, st, plan, baseline, schema = false) match {
        case Applied => r.put("applied", true)
        case NotApplied(why) => r.put("applied", false); r.put("notApplied", why)
        case NoDefinition =>
      }
    }
    r
  }

  private def result(st: Statement): J.Obj = J.obj(
    "index" -> J.Num(st.index), "line" -> J.Num(st.line), "column" -> J.Num(st.column),
    "text" -> J.Str(Analyzer.head(st.text)))

  /** Parse and analysis; the analyzed plan, or None with the error put into r. */
  private def stage(session: SparkSession, st: Statement, r: J.Obj): Option[LogicalPlan] = {
    val parsed = try session.sessionState.sqlParser.parsePlan(st.text) catch {
      case NonFatal(e) => error(r, st, "parse", e); return None
    }
    try Some(session.sessionState.executePlan(parsed, CommandExecutionMode.SKIP).analyzed) catch {
      case NonFatal(e) => error(r, st, "analysis", e); None
    }
  }

  private def error(r: J.Obj, st: Statement, stage: String, e: Throwable): Unit = {
    val (line, column, cls, msg) = e match {
      case a: AnalysisException =>
        val (l, c) = st.at(a.line, a.startPosition)
        // a parse error's message shows the statement with a pointer; an analysis error's is one paragraph
        (l, c, Option(a.getErrorClass), if (a.isInstanceOf[ParseException]) a.getMessage else a.message)
      case other => (st.line, st.column, None, other.getClass.getName + ": " + String.valueOf(other.getMessage))
    }
    r.put("outcome", "error")
    r.put("error", J.obj(
      "stage" -> J.Str(stage),
      "message" -> J.Str(Redact.truncate(Redact.secrets(msg.trim), EventBuilder.ErrorMax)),
      "errorClass" -> J.opt(cls),
      "line" -> J.Num(line),
      "column" -> J.Num(column)))
  }

  /** Applies a statement that defines something (see the class comment), or says why not. */
  private def define(session: SparkSession, st: Statement, plan: LogicalPlan, baseline: Baseline, schema: Boolean): Applying = {
    val root = Nodes.shortName(plan)
    def exec(sql: String = st.text): Applying = try { session.sql(sql); Applied } catch {
      case NonFatal(e) => NotApplied("applying it failed: " + Analyzer.head(String.valueOf(e.getMessage)))
    }
    if (Analyzer.SessionLocal(root) || isTempView(plan)) return exec()
    plan match {
      // CACHE TABLE t AS SELECT: its temporary view, without the caching (which would run the query)
      case c: CacheTableAsSelect => return exec(s"CREATE OR REPLACE TEMPORARY VIEW ${Target.quote(c.tempViewName)} AS ${c.originalText}")
      case _ =>
    }
    val target = Target.of(plan)
    if (target.isEmpty && !Analyzer.Definition(root) && !schema) return NoDefinition // data statements: analyzed only
    if (!ownCatalog) return NotApplied("the catalog is a metastore: only session-local statements are applied")
    target match {
      case Some(t) if baseline.has(t) => NotApplied(s"$t was there before this request: requests do not change it")
      case Some(t) if t.isCtas => ctas(session, plan, t)
      case Some(_) => exec()
      case None if schema && plan.isInstanceOf[Command] && Try(Nodes.describe(plan).write.isEmpty).getOrElse(false) =>
        exec() // schema files: ALTER TABLE and the like; never a statement that writes data
      case None => NotApplied(s"$root: not applied (no dataset it defines could be told)")
    }
  }

  /** Temporary views, global ones included (the request's Baseline removes those at its end). */
  private def isTempView(p: LogicalPlan): Boolean = p match {
    case c: CreateViewCommand => c.viewType != PersistedView
    case _ => false
  }

  /** Defines a CTAS's table from its analyzed query's schema: no data. */
  private def ctas(session: SparkSession, plan: LogicalPlan, t: Target): Applying = {
    val info = Nodes.describe(plan)
    val spec = info.write.get
    val query = spec.query.flatMap {
      case ChildQuery(i) => plan.children.lift(i)
      case NestedQuery(role) => info.nested.collectFirst { case (`role`, q) => q }
    }
    query match {
      case None => NotApplied("the CTAS has no query to take the schema from")
      case Some(q) =>
        val schema = StructType(spec.columns.zip(q.output).map { case (n, a) => StructField(n, a.dataType, nullable = true) })
        val provider = spec.dataset.get("provider").collect { case J.Str(s) => s }.getOrElse("parquet")
        try { session.catalog.createTable(t.quoted, provider, schema, Map.empty[String, String]); Applied } catch {
          case NonFatal(e) => NotApplied("defining the table failed: " + Analyzer.head(String.valueOf(e.getMessage)))
        }
    }
  }
}

private[listener] object Analyzer {
  val NotOwn = "schema statements need the analyzer's own catalog; this analyzer reads a metastore, " +
    "which it never writes to"

  /** Root classes of statements that only change the analyzing session. */
  val SessionLocal: Set[String] = Set("SetCommand", "ResetCommand", "SetNamespaceCommand", "SetCatalogCommand",
    "SetCatalogAndNamespace", "CreateTempViewUsing", "CreateVariable", "DropVariable", "SetVariable",
    "SetNamespaceCommand")

  /** Root classes of statements that define datasets in the catalog (applied to the analyzer's own). */
  val Definition: Set[String] = Set("CreateDatabaseCommand", "CreateNamespace", "CreateDataSourceTableCommand",
    "CreateTableCommand", "CreateTableLikeCommand", "CreateViewCommand", "DropTableCommand", "DropDatabaseCommand",
    "DropNamespace")

  private val threads = java.lang.management.ManagementFactory.getThreadMXBean

  /** CPU time of the current thread (-1 where the JVM does not measure it): wall time on a busy machine is not the analyzer's. */
  def cpuNanos(): Long = Try(threads.getCurrentThreadCpuTime).getOrElse(-1L)

  def isGlobal(viewType: AnyRef): Boolean = Nodes.shortName(viewType) == "GlobalTempView"

  /** A command, or commands together (a multi-insert `FROM t INSERT … INSERT …` is a Union of inserts). */
  def isCommand(p: LogicalPlan): Boolean = p match {
    case _: Command => true
    case w: WithCTE => isCommand(w.plan)
    case _ => p.children.nonEmpty && p.children.forall(isCommand)
  }

  /**
   * The plans Spark executes for an analyzed statement, each an execution the listener reports:
   * the statement, or, for commands together (a Union of commands, a WithCTE over one), each
   * command on its own where Spark runs them so (Versions.unionOfCommandsIsOneExecution).
   */
  def executions(p: LogicalPlan): Seq[LogicalPlan] =
    if (p.isInstanceOf[Command] || p.isInstanceOf[WithCTE] || !isCommand(p) || Versions.unionOfCommandsIsOneExecution) Seq(p)
    else p.children.flatMap(executions)

  def head(s: String): String = {
    val one = s.replaceAll("\\s+", " ").trim
    if (one.length <= 120) one else one.substring(0, 117) + "..."
  }
}

/** Whether a statement was applied to the session or the analyzer's catalog. */
private[listener] sealed trait Applying
private[listener] case object Applied extends Applying
private[listener] final case class NotApplied(reason: String) extends Applying
/** The statement defines nothing: analyzed only. */
private[listener] case object NoDefinition extends Applying

/** What a catalog statement creates or drops: a database, or a table or view of one. */
private[listener] final case class Target(db: String, table: Option[String], isCtas: Boolean = false) {
  def quoted: String = (Seq(db) ++ table).map(Target.quote).mkString(".")
  override def toString: String = (Seq(db) ++ table).mkString(".")
}

private[listener] object Target {
  def quote(part: String): String = "`" + part.replace("`", "``") + "`"

  def of(p: LogicalPlan): Option[Target] = Try(p match {
    case c: CreateDatabaseCommand => Some(Target(c.databaseName, None))
    case c: DropDatabaseCommand => Some(Target(c.databaseName, None))
    case c: CreateNamespace => ns(c.name)
    case c: DropNamespace => ns(c.namespace)
    case c: CreateDataSourceTableCommand => table(c.table.identifier)
    case c: CreateTableCommand => table(c.table.identifier)
    case c: CreateTableLikeCommand => table(c.targetTable)
    case c: CreateViewCommand if c.viewType == PersistedView => table(c.name)
    case c: DropTableCommand => table(c.tableName)
    case c => // a CTAS: a write that creates (or replaces) a catalog table
      val w = Nodes.describe(c).write
      w.filter(s => (s.mode == "create" || s.mode == "replace") && s.dataset.get("kind").contains(J.Str("table"))).flatMap { s =>
        val nsParts = s.dataset.get("namespace").collect { case a: J.Arr => a.items.collect { case J.Str(x) => x } }.getOrElse(Nil)
        val name = s.dataset.get("name").collect { case J.Str(x) => x }
        (nsParts.toSeq, name) match {
          case (Seq(db), Some(n)) => Some(Target(db, Some(n), isCtas = true))
          case _ => None
        }
      }
  }).toOption.flatten

  private def ns(p: LogicalPlan): Option[Target] = p match {
    case r: ResolvedNamespace if r.namespace.size == 1 => Some(Target(r.namespace.head, None))
    case Compat.ResolvedDBObject(Seq(db)) => Some(Target(db, None)) // CREATE DATABASE on 3.3
    case _ => None
  }

  private def table(id: TableIdentifier): Option[Target] = id.database.map(db => Target(db, Some(id.table)))
}

/**
 * What was there when a request started: the global temporary views, and with the analyzer's
 * own catalog its databases and tables; `restore` drops what the request added.
 */
private[listener] final class Baseline(session: SparkSession, own: Boolean) {
  private val catalog = session.sessionState.catalog
  private val views: Set[String] = Baseline.globalViews(session).toSet
  private val dbs: Set[String] = if (own) Baseline.listDbs(session).toSet else Set.empty
  private val tables: Set[(String, String)] =
    if (own) dbs.toSeq.flatMap(db => Baseline.listTables(session, db).map(db -> _)).toSet else Set.empty

  def has(t: Target): Boolean = t.table match {
    case None => dbs(t.db.toLowerCase)
    case Some(n) => dbs(t.db.toLowerCase) && tables((t.db.toLowerCase, n.toLowerCase))
  }

  def restore(): Unit = {
    Baseline.globalViews(session).filterNot(views).foreach(v => Try(catalog.globalTempViewManager.remove(v)))
    if (own) Baseline.listDbs(session).foreach { db =>
      if (!dbs(db)) Try(catalog.dropDatabase(db, ignoreIfNotExists = true, cascade = true))
      else Baseline.listTables(session, db).foreach { t =>
        if (!tables((db, t))) Try(catalog.dropTable(TableIdentifier(t, Some(db)), ignoreIfNotExists = true, purge = true))
      }
    }
  }
}

private[listener] object Baseline {
  private def globalViews(session: SparkSession): Seq[String] =
    Try(session.sessionState.catalog.globalTempViewManager.listViewNames("*")).getOrElse(Nil)

  private def listDbs(session: SparkSession): Seq[String] =
    session.sessionState.catalog.listDatabases().map(_.toLowerCase)

  private def listTables(session: SparkSession, db: String): Seq[String] =
    session.sessionState.catalog.externalCatalog.listTables(db).map(_.toLowerCase)
}
