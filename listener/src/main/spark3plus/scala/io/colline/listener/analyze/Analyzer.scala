package io.colline.listener.analyze

import java.util.concurrent.atomic.AtomicLong

import scala.util.Try
import scala.util.control.NonFatal

import org.apache.spark.sql.{AnalysisException, SparkSession}
import org.apache.spark.sql.catalyst.parser.ParseException
import org.apache.spark.sql.catalyst.plans.logical.{Command, LogicalPlan, WithCTE}
import org.apache.spark.sql.execution.CommandExecutionMode

import io.colline.listener.{Config, Event, EventBuilder, J, Pending, Redact, Seal, Skipped, Versions}

/** A named SQL text: a file to analyze, or schema statements to register. */
private[listener] final case class Part(name: String, sql: String)

/**
 * One analysis, in a session of its own: the tables given as data registered first, then the
 * schema parts (statements whose definitions are registered, never published), then the files,
 * statement by statement. `app` and `namespace` name the job the events belong to; `reads` also
 * publishes plain queries (as the listener's `publishReads`); `conf` is set on the session first
 * (Settings says which settings a request may change); `infer` gives the tables that nobody
 * described the schemas their statements need (Inference).
 */
private[listener] final case class Request(
    app: String = "colline-analyze",
    namespace: String = "default",
    reads: Boolean = false,
    conf: Seq[(String, String)] = Nil,
    tables: Seq[TableSpec] = Nil,
    schema: Seq[Part] = Nil,
    files: Seq[Part] = Nil,
    infer: Boolean = false)

/**
 * Parses and analyzes SQL with Spark and turns each statement into the event the listener would
 * publish for it, marked `analyzed`, through the listener's own serializer (EventBuilder) and its
 * last steps (Seal: scrub, size cap). It never optimizes, plans or executes a statement, and
 * never runs one through `session.sql`:
 *
 *  - a statement is parsed, then passes the Allowlist (kinds refused before analysis: ADD JAR,
 *    functions, temporary views over data sources, EXECUTE IMMEDIATE, path reads, …), then is
 *    analyzed with `CommandExecutionMode.SKIP`;
 *  - what it defines is registered by colline's code (Registrar): settings, the current database
 *    and temporary views in the request's own session; with the analyzer's own catalog (`root`,
 *    its warehouse inside its work directory; never a user's metastore) databases, tables and
 *    views, at the analyzer's own location, so that a job that creates a staging table and reads
 *    it analyzes as it runs;
 *  - nothing a request defines outlives it: `Registrar.restore` removes it at the request's end,
 *    and what was there before (the `--ddl` baseline) is never changed by a request.
 *
 * Requests are analyzed one at a time (the catalog is shared by their sessions), each within the
 * deadline its caller sets (Deadline).
 */
private[listener] final class Analyzer(base: SparkSession, cfg: Config, val root: Option[java.io.File]) {
  private val executions = new AtomicLong
  private lazy val appId = Try(base.sparkContext.applicationId).getOrElse("colline-analyze")
  private lazy val user = Try(base.sparkContext.sparkUser).getOrElse(null)

  def ownCatalog: Boolean = root.isDefined

  /** Registers schema statements in the analyzer's catalog for good: the baseline of every request. */
  def load(parts: Seq[Part]): J.Arr = synchronized {
    if (!ownCatalog && parts.nonEmpty) throw new IllegalArgumentException(Analyzer.NotOwn)
    val session = base.newSession()
    Settings.lock(session)
    val reg = new Registrar(session, root)
    val sources = new Sources(session, Sources.DDL)
    J.arr(parts.map(p => part(p, st => schemaStatement(session, st, reg, sources))))
  }

  def run(req: Request): J.Obj = synchronized {
    if (!ownCatalog && (req.schema.nonEmpty || req.tables.nonEmpty)) throw new IllegalArgumentException(Analyzer.NotOwn)
    val session = base.newSession()
    Settings.lock(session)
    req.conf.foreach { case (k, v) =>
      Settings.refusal(session, k).foreach(why => throw new IllegalArgumentException("conf: " + why))
      session.conf.set(k.trim, v)
    }
    val c = cfg.copy(namespace = req.namespace, publishReads = req.reads)
    val inference = if (req.infer) Some(new Inference) else None
    // a later statement that revises a type inference chose by default for an earlier one (an
    // INSERT of the column into a bigint) makes the request run again from its start, with the
    // revised types, in a new session (the first pass's temporary views and settings gone): each
    // statement then sees the types the whole script needs
    var answer = pass(req, c, inference, session)
    var passes = 1
    while (inference.exists(_.revised) && passes < Inference.MaxPasses) {
      passes += 1
      val again = base.newSession()
      Settings.lock(again)
      req.conf.foreach { case (k, v) => again.conf.set(k.trim, v) }
      answer = pass(req, c, inference, again)
    }
    answer
  }

  /** One pass over a request's tables, schema parts and files, in a session of its own. */
  private def pass(req: Request, c: Config, inference: Option[Inference], session: SparkSession): J.Obj = {
    val reg = new Registrar(session, root)
    val sources = new Sources(session, if (ownCatalog) Sources.DDL else Sources.Metastore)
    inference.foreach(_.start(session, reg))
    try {
      val tables = J.arr(req.tables.map { t =>
        Deadline.check()
        val o = J.obj("name" -> J.Str(t.name), "source" -> J.Str(t.source))
        reg.define(t) match {
          case Applied(note) =>
            o.put("outcome", "applied"); if (note.nonEmpty) o.put("note", note)
            Tables.catalogTable(t, session.sessionState.catalog.getCurrentDatabase).foreach(ct =>
              sources.set(ct.identifier, if (t.source.isEmpty) Sources.Given else t.source))
          case NotApplied(why) => o.put("outcome", "refused"); o.put("reason", why)
          case NoDefinition => o.put("outcome", "refused"); o.put("reason", "nothing to define")
        }
        o
      })
      val schema = J.arr(req.schema.map(p => part(p, st => schemaStatement(session, st, reg, sources))))
      val files = J.arr(req.files.map(f => part(f, st => analyze(session, st, req, c, reg, sources, inference))))
      J.obj("tables" -> tables, "schema" -> schema, "files" -> files)
    } finally reg.restore()
  }

  /**
   * The tables the request's SQL names that nothing defines for it: not its `tables`, not the
   * catalog (the `--ddl` baseline, a metastore), not an earlier statement of its schema parts or
   * files (CREATE TABLE, a CTAS, a view, a temporary view), not a CTE. Parsing only: nothing is
   * analyzed or registered. The caller (colline, which reads the graph) gives them as `tables`.
   */
  def names(req: Request): J.Obj = synchronized {
    val session = base.newSession()
    Settings.lock(session)
    req.conf.foreach { case (k, v) =>
      Settings.refusal(session, k).foreach(why => throw new IllegalArgumentException("conf: " + why))
      session.conf.set(k.trim, v)
    }
    val catalog = session.sessionState.catalog
    var db = catalog.getCurrentDatabase.toLowerCase
    val given = req.tables.flatMap(t => Tables.catalogTable(t, db).toOption.map(ct => Inference.norm(ct.identifier))).toSet
    val defined = scala.collection.mutable.Set.empty[org.apache.spark.sql.catalyst.TableIdentifier]
    val views = scala.collection.mutable.Set.empty[String]
    val out = scala.collection.mutable.LinkedHashSet.empty[org.apache.spark.sql.catalyst.TableIdentifier]
    def ident(parts: Seq[String]): Option[org.apache.spark.sql.catalyst.TableIdentifier] = parts.map(_.toLowerCase) match {
      case Seq(t) if views(t) => None
      case Seq(t) => Some(org.apache.spark.sql.catalyst.TableIdentifier(t, Some(db)))
      case Seq("global_temp", _) => None
      case Seq(d, t) => Some(org.apache.spark.sql.catalyst.TableIdentifier(t, Some(d)))
      case Seq(Registrar.SessionCatalog, d, t) => Some(org.apache.spark.sql.catalyst.TableIdentifier(t, Some(d)))
      case _ => None
    }
    for (p <- req.schema ++ req.files; st <- Statements.split(p.sql)) {
      Deadline.check()
      Try(session.sessionState.sqlParser.parsePlan(st.text)).toOption.filter(Allowlist.beforeAnalysis(_).isEmpty).foreach { parsed =>
        Relations.use(parsed).collect { case Seq(n) => n; case Seq(Registrar.SessionCatalog, n) => n }.foreach(n => db = n.toLowerCase)
        Relations.refs(parsed).foreach(r => ident(r.parts).foreach { id =>
          if (!defined(id) && !given(id) && !out(id) && !Try(catalog.tableExists(id)).getOrElse(false)) out += id
        })
        Relations.defined(parsed).foreach {
          case (Seq(v), true) => views += v.toLowerCase
          case (parts, _) => ident(parts).foreach(defined += _)
        }
      }
    }
    J.obj("names" -> J.arr(out.toSeq.map(id => J.obj("database" -> J.Str(id.database.get), "table" -> J.Str(id.table)))))
  }

  private def part(p: Part, f: Statement => J.Obj): J.Obj =
    J.obj("name" -> J.Str(p.name), "statements" -> J.arr(Statements.split(p.sql).map { st => Deadline.check(); f(st) }))

  /** A schema statement: registered, or skipped with the reason; never published. */
  private def schemaStatement(session: SparkSession, st: Statement, reg: Registrar, sources: Sources): J.Obj = {
    val r = result(st)
    parse(session, st, r).flatMap(parsed => analyzed(session, st, parsed, r).map(parsed -> _)).foreach { case (parsed, plan) =>
      reg.register(plan) match {
        case Applied(note) =>
          r.put("outcome", "applied"); if (note.nonEmpty) r.put("note", note)
          sources.defined(parsed, Sources.DDL)
        case NotApplied(why) => r.put("outcome", "skipped"); r.put("reason", why)
        case NoDefinition => r.put("outcome", "skipped"); r.put("reason", "not a schema statement")
      }
    }
    r
  }

  /**
   * One statement: parsed, let through by the Allowlist, the tables it reads that nobody
   * described inferred (with `infer`), analyzed, serialized; registered when it defines something.
   */
  private def analyze(session: SparkSession, st: Statement, req: Request, c: Config, reg: Registrar, sources: Sources,
      inference: Option[Inference]): J.Obj = {
    val r = result(st)
    val t0 = System.nanoTime()
    val cpu0 = Analyzer.cpuNanos()
    val parsed = parse(session, st, r).getOrElse(return r)
    var prepared: Option[LogicalPlan] = None
    val inferring = try inference.map(_.prepare(parsed, () => session.sessionState.sqlParser.parsePlan(st.text))) catch {
      case NonFatal(e) if Deadline.expired => Deadline.check(); throw e
      case NonFatal(e) => error(r, st, "inference", e); return r // the statement's error, not the request's
    }
    inferring match {
      case Some(Inference.TableLevel(reasons)) =>
        r.put("outcome", "tableLevel")
        r.put("reason", reasons.mkString("; "))
        r.put("cannotInfer", J.strs(reasons))
        r.put("tables", sources.of(parsed, inference))
        val (reads, writes) = sources.tableLevel(parsed)
        r.put("reads", J.arr(reads.map(Analyzer.tableJson)))
        r.put("writes", J.arr(writes.map(Analyzer.tableJson)))
        r.put("analyzeMicros", (System.nanoTime() - t0) / 1000)
        return r
      case Some(Inference.Ready(tables, plan, rounds)) if tables.nonEmpty =>
        tables.foreach { case (id, _) => sources.set(id, Sources.Inferred) }
        r.put("inferred", J.arr(tables.map { case (id, schema) =>
          Analyzer.tableJson(id).put("columns", J.arr(schema.fields.filterNot(_.name == Inference.Placeholder).map(f =>
            J.obj("name" -> J.Str(f.name), "type" -> J.Str(f.dataType.catalogString)))))
        }))
        r.put("inferRounds", rounds.toLong)
        prepared = plan
      case _ =>
    }
    prepared.orElse(analyzed(session, st, parsed, r)).foreach { plan =>
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
      r.put("tables", sources.of(parsed, inference))
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
              inference.foreach(i => Marks.inferred(json, i))
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
      reg.register(plan) match {
        case Applied(note) =>
          r.put("applied", true); if (note.nonEmpty) r.put("note", note)
          sources.defined(parsed, Sources.Script)
        case NotApplied(why) => r.put("applied", false); r.put("notApplied", why)
        case NoDefinition =>
      }
    }
    r
  }

  private def result(st: Statement): J.Obj = J.obj(
    "index" -> J.Num(st.index), "line" -> J.Num(st.line), "column" -> J.Num(st.column),
    "text" -> J.Str(Analyzer.head(st.text)))

  /** Parse and the Allowlist: the parsed plan, or None with the error or the refusal put into r. */
  private def parse(session: SparkSession, st: Statement, r: J.Obj): Option[LogicalPlan] = {
    val parsed = try session.sessionState.sqlParser.parsePlan(st.text) catch {
      case NonFatal(e) => error(r, st, "parse", e); return None
    }
    Allowlist.beforeAnalysis(parsed) match {
      case Some(why) =>
        r.put("outcome", "refused")
        r.put("reason", why)
        None
      case None => Some(parsed)
    }
  }

  /** Analysis: the analyzed plan, or None with the error put into r. A deadline passed is not a statement's error: it ends the request. */
  private def analyzed(session: SparkSession, st: Statement, parsed: LogicalPlan, r: J.Obj): Option[LogicalPlan] =
    try Some(session.sessionState.executePlan(parsed, CommandExecutionMode.SKIP).analyzed) catch {
      case NonFatal(e) if Deadline.expired => Deadline.check(); throw e
      case NonFatal(e) => error(r, st, "analysis", e); None
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
}

private[listener] object Analyzer {
  val NotOwn = "schema statements and tables need the analyzer's own catalog; this analyzer reads a metastore, " +
    "which it never writes to"

  private val threads = java.lang.management.ManagementFactory.getThreadMXBean

  /** CPU time of the current thread (-1 where the JVM does not measure it): wall time on a busy machine is not the analyzer's. */
  def cpuNanos(): Long = Try(threads.getCurrentThreadCpuTime).getOrElse(-1L)

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

  def tableJson(id: org.apache.spark.sql.catalyst.TableIdentifier): J.Obj =
    J.obj("database" -> J.opt(id.database), "table" -> J.Str(id.table))

  def head(s: String): String = {
    val one = s.replaceAll("\\s+", " ").trim
    if (one.length <= 120) one else one.substring(0, 117) + "..."
  }
}
