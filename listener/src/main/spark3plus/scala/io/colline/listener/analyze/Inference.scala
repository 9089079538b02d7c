package io.colline.listener.analyze

import scala.collection.mutable
import scala.util.Try
import scala.util.control.NonFatal

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.analysis.{MultiAlias, UnresolvedAttribute, UnresolvedExtractValue}
import org.apache.spark.sql.catalyst.catalog.{HiveTableRelation, UnresolvedCatalogRelation}
import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, Cast, CreateNamedStruct, OuterReference, ExpectsInputTypes, Explode, Expression, ExprId, GetArrayItem, GetMapValue, GetStructField, LambdaFunction, Literal, NamedExpression, PosExplode, SubqueryExpression}
import org.apache.spark.sql.catalyst.plans.{LeftAnti, LeftSemi}
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, Expand, Generate, InsertIntoStatement, Join, LogicalPlan, Project, SubqueryAlias}
import org.apache.spark.sql.execution.datasources.LogicalRelation
import org.apache.spark.sql.types.{ArrayType, DataType, ByteType, IntegerType, LongType, MapType, ShortType, NullType, StringType, StructField, StructType}

import io.colline.listener.{Nodes, Reflect}

/**
 * Schemas for the tables a statement reads that nobody described (no DDL, metastore, graph or
 * earlier statement defines them): the columns the statement references become the table's
 * columns, with the types Spark's analysis asks of them, so that the analysis (and the lineage)
 * is the one Spark would make of the real table. Spark's own analyzer decides, round by round:
 *
 *  1. the table is defined with no column it knows of (one placeholder, as Spark needs one);
 *  2. the statement is analyzed without Spark's final checks; each column reference left
 *     unresolved where everything below it is resolved is placed by the rules of SQL's name
 *     resolution: qualified (`o.amount`, `shop.orders.amount`), it belongs to the relation the
 *     qualifier names; unqualified, to a known relation of its own FROM clause that has it (Spark
 *     resolves it there), or else to the only relation nobody described of its scope (the FROM
 *     clause, then the enclosing queries up to the first whose known relation has it); `a.b.c`
 *     on a column is a struct field; the key columns of a `USING` join are on both sides, and
 *     its other columns are those of its sides (Spark's projection of the join is seen through).
 *     A new column's type is `void` (Spark's NullType: no type yet); the columns are in the order
 *     the statements first name them (the position in the SQL text), whatever the order Spark's
 *     rules resolve them in;
 *  3. where Spark's type coercion casts a `void` column to a type (`sum(amount)` wants a double,
 *     `kind = 'x'` a string, an INSERT the target's type), the column takes that type, so that
 *     the final analysis adds no cast; a function whose argument must be an array or a map
 *     (`explode`, `size`) makes it one; a column that no expression constrains is a string;
 *  4. repeated until nothing changes; then the statement is analyzed as any other, with Spark's
 *     checks.
 *
 * What cannot be inferred is never guessed: a `*` over such a table (its other columns are
 * unknown), an unqualified column that two such tables could hold, a NATURAL join with one (its
 * keys are the columns both sides have), an INSERT into one by position (its column names). Nor
 * is a column that the rounds could not place while a table nobody described is below it: when
 * Spark's final analysis would fail on it, it is named with where it stands. The statement then
 * keeps table-level lineage only (`TableLevel`), with each name and reason.
 */
private[listener] final class Inference {
  import Inference._

  private var session: SparkSession = _
  private var reg: Registrar = _
  private def catalog = session.sessionState.catalog
  private val tables = mutable.LinkedHashMap.empty[TableIdentifier, Table]
  /** Statements prepared so far: a column first named by a later statement comes after those of earlier ones. */
  private var statement = 0L
  private var revisedInPass = false

  /**
   * Starts a pass over a request in a session (the first, or one more after a revision): the
   * tables inferred by an earlier pass keep their columns and types and are defined again as the
   * statements that read them come.
   */
  def start(s: SparkSession, r: Registrar): Unit = {
    session = s
    reg = r
    statement = 0L
    revisedInPass = false
    tables.values.foreach { t => t.defined = false; t.definedAs = None; t.dirty = true; t.revisedFrom = Long.MaxValue }
  }

  /**
   * Whether a statement of this pass revised a type inference chose by default in an earlier one:
   * the earlier statements saw another type, so the request is analyzed again (`MaxPasses`).
   */
  def revised: Boolean = revisedInPass

  /** Whether a table was inferred by this request. */
  def inferred(id: TableIdentifier): Boolean = tables.contains(norm(id))

  /** The tables this request inferred, with their columns. */
  def all: Seq[(TableIdentifier, StructType)] = tables.values.map(t => t.id -> t.schema(done = true)).toSeq

  /** The identifier a statement's relation name stands for, when it is a table of the session catalog (not a temporary view). */
  def ident(parts: Seq[String]): Option[Either[String, TableIdentifier]] = parts.map(_.toLowerCase) match {
    case Seq(t) if catalog.getRawTempView(t).isDefined => None
    case Seq(t) => Some(Right(TableIdentifier(t, Some(catalog.getCurrentDatabase.toLowerCase))))
    case Seq(db, _) if db == globalTemp => None
    case Seq(db, t) => Some(Right(TableIdentifier(t, Some(db))))
    case Seq(cat, db, t) if cat == Registrar.SessionCatalog => Some(Right(TableIdentifier(t, Some(db))))
    case _ => Some(Left(s"${parts.mkString(".")} is not a table of ${Registrar.SessionCatalog} (db.table): it cannot be inferred"))
  }

  /** Whether a table is known other than by inference: defined by DDL, a metastore, the graph or an earlier statement (with a metastore, one the script created: ScriptTables). */
  def known(id: TableIdentifier): Boolean = !tables.contains(norm(id)) && (Try(catalog.tableExists(id)).getOrElse(false) || reg.isScripted(id))

  /**
   * Prepares the catalog for a parsed statement: infers the tables it reads that nobody described,
   * or says why it cannot. `parse` parses the statement again: each analysis is of a plan of its
   * own, as Spark's analyzer marks the nodes of a plan it analyzes (a rule that changed nothing in
   * a node is not applied to that node again), so a plan analyzed while a column was missing would
   * stay unresolved where the column is now there (the outer references of a subquery).
   */
  def prepare(parsed: LogicalPlan, parse: () => LogicalPlan): Prepared = {
    revise(parse(), statement + 1) // a statement of this pass that comes after those prepared
    val refs = Relations.refs(parsed)
    val ctes = Relations.cteNames(parsed)
    def unknownParts(parts: Seq[String]): Option[TableIdentifier] =
      if (parts.size == 1 && ctes(parts.head.toLowerCase)) None
      else ident(parts).collect { case Right(id) if !known(id) => id }
    val unknown = refs.flatMap(r => unknownParts(r.parts).map(r -> _))
    if (unknown.isEmpty) return NoInference
    statement += 1
    val reasons = mutable.LinkedHashSet.empty[String]
    refs.foreach(r => ident(r.parts).foreach { case Left(why) => reasons += why; case _ => })

    // what the statement writes into a table nobody described
    val insert = parsed.collectFirst { case i: InsertIntoStatement => i }
    val target = insert.flatMap(i => i.table match {
      case u: org.apache.spark.sql.catalyst.analysis.UnresolvedRelation => unknownParts(u.multipartIdentifier).map(u.multipartIdentifier -> _)
      case _ => None
    })
    val byName = insert.exists(i => Reflect.bool(i, "byName").contains(true))
    target.foreach { case (parts, _) =>
      if (insert.get.userSpecifiedCols.isEmpty && !byName)
        reasons += s"INSERT INTO ${parts.mkString(".")}, which nobody described, by position: its column names cannot be inferred " +
          "(name them: INSERT INTO t (a, b) …, or INSERT INTO t BY NAME …)"
    }
    unknown.collect { case (r, id) if r.written && !target.exists(_._2 == id) =>
      reasons += s"${Nodes.shortName(parsed)} of ${r.parts.mkString(".")}, which nobody described: its columns cannot be inferred"
    }
    def isUnknown(f: Relations.From) = unknownParts(f.parts).isDefined
    Relations.usingJoins(parsed).foreach { case (_, l, r, natural) =>
      if (natural) (l ++ r).find(isUnknown).foreach(f =>
        reasons += s"NATURAL JOIN with ${f.parts.mkString(".")}, which nobody described: its keys are the columns both sides have, " +
          "which cannot be inferred (join with USING or ON)")
    }
    Relations.stars(parsed).foreach { case (starTarget, scope) =>
      scope.filter(isUnknown).filter(f => starTarget.forall(t => names(f, t))).foreach { f =>
        val star = starTarget.map(_.mkString(".") + ".*").getOrElse("*")
        reasons += s"$star over ${f.parts.mkString(".")}, which nobody described: its columns cannot be inferred " +
          "(name the columns the statement needs, or describe the table)"
      }
    }
    if (reasons.nonEmpty) return TableLevel(reasons.toSeq)

    // the tables read: defined with the columns the statement needs
    val touched = mutable.LinkedHashSet.empty[Table]
    unknown.foreach { case (_, id) =>
      val t = tables.getOrElseUpdate(norm(id), new Table(norm(id)))
      touched += t
    }
    Relations.usingJoins(parsed).foreach { case (cols, l, r, _) =>
      for (side <- Seq(l, r); c <- cols) {
        val un = side.filter(isUnknown).flatMap(f => unknownParts(f.parts)).distinct
        val hasIt = side.filterNot(isUnknown).exists(f => ident(f.parts).exists {
          case Right(id) => reg.metadata(id).exists(_.schema.fieldNames.exists(_.equalsIgnoreCase(c)))
          case _ => false
        })
        if (!hasIt) un match {
          case Seq(id) => tables(norm(id)).add(c, Nil, mention(parsed, c, side.filter(isUnknown)))
          case Seq() =>
          case many => reasons += ambiguous(c, many.map(_.unquotedString))
        }
      }
    }
    val qualifierNames = Relations.qualifiers(parsed)
    val targetCols = target.map { case (_, id) =>
      val t = tables.getOrElseUpdate(norm(id), new Table(norm(id)))
      touched += t
      t -> (if (byName) Nil else insert.get.userSpecifiedCols)
    }
    // while the target's columns wait for the query's types, only the query is analyzed
    var targetPending = targetCols.isDefined
    def queryOnly = parse() transformDown { case i: InsertIntoStatement => i.query }

    var rounds = 0
    var last: Option[LogicalPlan] = None
    var done = false
    while (!done && rounds < MaxRounds && reasons.isEmpty) {
      rounds += 1
      val t0 = System.nanoTime()
      touched.foreach(_.fields(qualifierNames, parsed, at))
      sync(touched, reasons)
      if (reasons.nonEmpty) return TableLevel(reasons.toSeq)
      val t1 = System.nanoTime()
      def attempt(plan: => LogicalPlan) = try Some(session.sessionState.analyzer.execute(plan)) catch {
        case NonFatal(e) if Deadline.expired => throw e
        case NonFatal(_) => None // Spark's own error, which the final analysis reports
      }
      val full = attempt(if (targetPending) queryOnly else parse())
      // an INSERT that Spark refuses (a column, a string by default, written where a number goes,
      // until `revise` types it): its query alone says what the columns' other uses ask
      val partial = full.orElse(if (!targetPending && insert.isDefined) attempt(queryOnly) else None)
      var changed = false
      partial.foreach { p =>
        val t2 = System.nanoTime()
        val refs = references(p)
        val a = place(p, reasons)
        val b = learn(p, refs)
        val c = mismatches(p, refs)
        if (Inference.debug) System.err.println(s"colline infer round $rounds: sync ${(t1 - t0) / 1000} us, analysis ${(t2 - t1) / 1000} us, " +
          s"rules ${(System.nanoTime() - t2) / 1000} us: placed=$a learned=$b retyped=$c " +
          touched.map(t => t.id.unquotedString + t.schema(done = false).catalogString).mkString(" "))
        changed = a || b || c
        if (targetPending && p.resolved) {
          val (t, named) = targetCols.get
          val out = p.output
          (if (named.isEmpty) out.map(_.name) else named).zip(out).foreach { case (c, a) => t.add(c, Nil, at(None)); t.set(c, Nil, a.dataType) }
          targetPending = false
          changed = true
        }
      }
      if (!changed) {
        // nothing more to learn: what no expression constrains is a string, then one more round
        // (a function that needs an array or a map of such a column says so) that is the analysis.
        // Where Spark's analysis fails on columns of no type (a PIVOT refuses a pivot column of no
        // type), they are strings too, and Spark's coercion of them says what its uses ask
        if (touched.forall(_.isSettled)) { done = true; last = full }
        else touched.foreach(_.settle(statement))
      }
    }
    if (reasons.nonEmpty) return TableLevel(reasons.toSeq)
    touched.foreach(_.settle(statement))
    sync(touched, reasons)
    if (reasons.nonEmpty) return TableLevel(reasons.toSeq)
    // an INSERT of a column this statement made a string by default into a column of another type
    if (revise(parse(), statement)) { last = None; sync(touched, reasons) }
    if (reasons.nonEmpty) return TableLevel(reasons.toSeq)
    def checked(p: LogicalPlan): Option[LogicalPlan] = if (!p.resolved) {
      if (Inference.debug) System.err.println(s"colline infer: unresolved in ${catalog.getCurrentDatabase} ns=${session.sessionState.catalogManager.currentNamespace.mkString(".")}: " + p.treeString.take(600))
      None
    } else
      try { session.sessionState.analyzer.checkAnalysis(p); Some(p) } catch {
        case NonFatal(e) if Deadline.expired => throw e
        case NonFatal(e) => if (Inference.debug) System.err.println("colline infer: check: " + e.getMessage.take(300)); None
      }
    // the last round analyzed the statement as it is now defined, or one more analysis does
    val analyzed = last.flatMap(checked).orElse {
      val p = try Some(session.sessionState.analyzer.execute(parse())) catch {
        case NonFatal(e) if Deadline.expired => throw e
        case NonFatal(e) => if (Inference.debug) System.err.println("colline infer: final: " + e.getMessage.take(300)); None // Spark's own error, which the analysis reports
      }
      val ok = p.flatMap(checked)
      // Spark's analysis fails: a column over a table nobody described that could not be placed or typed is named, not guessed
      if (ok.isEmpty) p.foreach(unplaced(_, reasons))
      ok
    }
    if (reasons.nonEmpty) return TableLevel(reasons.toSeq)
    if (tables.values.exists(_.revisedFrom < statement)) revisedInPass = true
    Ready(touched.toSeq.map(t => t.id -> t.schema(done = true, statement)), analyzed, rounds)
  }

  /**
   * An INSERT into a described table of a column whose type an earlier statement chose by default
   * (a string: nothing there constrained it) while the target's column has another type: the
   * column takes the target's type, as a column of no type does (Spark would refuse the string
   * under ANSI store assignment, or cast it), and the pass is marked `revised`. The column is
   * followed through the names that stand for it, casts to its own type and views.
   */
  private def revise(parsed: LogicalPlan, current: Long): Boolean = tables.nonEmpty && {
    var changed = false
    // only once the inferred tables it reads are defined in this pass (a failed lookup of one in
    // a Hive metastore leaves it unresolvable for the statement's later analyses)
    val pending = Relations.refs(parsed).exists(r => ident(r.parts).exists {
      case Right(id) => tables.get(norm(id)).exists(!_.defined)
      case _ => false
    })
    if (!pending)
    parsed.collectFirst { case i: InsertIntoStatement => i }.foreach { insert =>
      val target = insert.table match {
        case u: org.apache.spark.sql.catalyst.analysis.UnresolvedRelation =>
          ident(u.multipartIdentifier).collect { case Right(id) if known(id) => id }
        case _ => None
      }
      target.flatMap(reg.metadata).foreach { meta =>
        val query = try Some(session.sessionState.analyzer.execute(insert.query)).filter(_.resolved) catch {
          case NonFatal(e) if Deadline.expired => throw e
          case NonFatal(_) => None // Spark's own error, which the analysis reports
        }
        query.foreach { q =>
          val static = insert.partitionSpec.collect { case (k, Some(_)) => k.toLowerCase }.toSet
          val byName = Reflect.bool(insert, "byName").contains(true)
          val types = meta.schema.fields.map(f => f.name.toLowerCase -> f.dataType).toMap
          val names: Seq[String] =
            if (insert.userSpecifiedCols.nonEmpty) insert.userSpecifiedCols
            else if (byName) q.output.map(_.name)
            else meta.schema.fieldNames.toSeq.filterNot(n => static(n.toLowerCase))
          val refs = references(q)
          val named = definitions(q)
          // the expression a written column is, down to the inferred columns it places as they are
          // (the column itself, a field of a struct it builds)
          def assign(e: Expression, t: DataType, depth: Int): Unit = if (depth < 64) refOf(e, refs) match {
            case Some((tb, col, path)) => tb.revise(col, path, t).foreach { since =>
              changed = true
              if (since < current) revisedInPass = true // an earlier statement saw the other type
            }
            case None => (e, t) match {
              case (a: Alias, _) => assign(a.child, t, depth + 1)
              case (a: Attribute, _) => named.getOrElse(a.exprId, Nil).foreach(assign(_, t, depth + 1))
              case (c: CreateNamedStruct, st: StructType) => c.nameExprs.zip(c.valExprs).foreach {
                case (Literal(f, StringType), v) => st.fields.find(_.name.equalsIgnoreCase(f.toString)).foreach(g => assign(v, g.dataType, depth + 1))
                case _ =>
              }
              case _ =>
            }
          }
          names.zip(q.output).foreach { case (n, a) => types.get(n.toLowerCase).foreach(assign(a, _, 0)) }
        }
      }
    }
    changed
  }

  /** The order key of a column first named at a position of this statement's text (None: after every named one). */
  private def at(startIndex: Option[Int]): Long = (statement << 32) | startIndex.map(_.toLong).getOrElse(0xffffffffL)

  /** Where a statement first names a column of a USING join's side: unqualified, or qualified by one of the side's relations. */
  private def mention(parsed: LogicalPlan, column: String, side: Seq[Relations.From]): Long = {
    val qualifiers = side.map(f => f.alias.getOrElse(f.parts.last).toLowerCase).toSet
    var first: Option[Int] = None
    def visit(p: LogicalPlan): Unit = {
      Relations.inner(p).foreach(visit)
      p.expressions.foreach(_.foreach {
        case s: SubqueryExpression => visit(s.plan)
        case u: UnresolvedAttribute if u.nameParts.nonEmpty && (u.nameParts match {
          case Seq(c, _*) if c.equalsIgnoreCase(column) => true
          case Seq(q, c, _*) => qualifiers(q.toLowerCase) && c.equalsIgnoreCase(column)
          case _ => false
        }) => u.origin.startIndex.foreach(i => first = Some(first.fold(i)(math.min(_, i))))
        case _ =>
      })
    }
    visit(parsed)
    at(first)
  }

  // ---------------------------------------------------------------- the catalog

  /** (Re)defines the tables whose columns changed, with the catalog API. */
  private def sync(ts: Iterable[Table], reasons: mutable.LinkedHashSet[String]): Unit = ts.foreach { t =>
    val now = t.schema(done = false, statement)
    if (t.dirty || !t.definedAs.contains(now)) {
      val why = reg.defineInferred(t.id, now, t.defined)
      if (Inference.debug) System.err.println(s"colline infer: define ${t.id} again=${t.defined} ${now.catalogString}: ${why.getOrElse("ok")} exists=${Try(catalog.tableExists(t.id))}")
      why.foreach(why => reasons += s"${t.id.unquotedString} cannot be defined: $why")
      t.defined = true
      t.definedAs = Some(now)
    }
    t.dirty = false
  }

  // ---------------------------------------------------------------- placing column references

  /** A relation a scope reads directly: the qualifier its columns go by, and the inferred table it is, if it is one. */
  private final case class Leaf(qualifier: Seq[String], table: Option[Table], names: Set[String] = Set.empty)

  private def relationId(p: LogicalPlan): Option[TableIdentifier] = (p match {
    case l: LogicalRelation => l.catalogTable.map(_.identifier)
    case h: HiveTableRelation => Some(h.tableMeta.identifier)
    case u: UnresolvedCatalogRelation => Some(u.tableMeta.identifier)
    case _ => None
  }).map(norm(_))

  /** Spark's projection of a USING or NATURAL join (ResolveNaturalAndUsingJoin tags it with the sides' hidden columns): its columns are its sides'. */
  private def semi(j: Join): Boolean = j.joinType match {
    case LeftSemi | LeftAnti => true
    case _ => false
  }

  private def usingJoin(p: Project): Boolean = p.child.isInstanceOf[Join] && p.getTagValue(Project.hiddenOutputTag).isDefined

  private def leaves(p: LogicalPlan, alias: Option[Seq[String]] = None): Seq[Leaf] = p match {
    case s: SubqueryAlias => leaves(s.child, alias.orElse(Some(s.identifier.qualifier :+ s.identifier.name)))
    case j: Join if semi(j) => leaves(j.left) // its columns are the left side's
    case j: Join => leaves(j.left) ++ leaves(j.right)
    case pr: Project if usingJoin(pr) => leaves(pr.child)
    // UNPIVOT (an Expand once analyzed): its own columns (the name and value columns), and its
    // input's others, which pass through it (its identifier columns are those it does not unpivot)
    case _ if (Nodes.shortName(p) == "Unpivot" || Nodes.shortName(p) == "Expand") && p.children.size == 1 =>
      val own = if (p.resolved) p.output.map(_.name.toLowerCase).toSet -- p.children.head.output.map(_.name.toLowerCase) else Set.empty[String]
      leaves(p.children.head, alias) :+ Leaf(alias.getOrElse(Nil), None, own)
    case _ if relationId(p).exists(tables.contains) => Seq(Leaf(alias.getOrElse(Nil), tables.get(relationId(p).get)))
    case _ if Relations.Passing(Nodes.shortName(p)) && p.children.size == 1 => leaves(p.children.head, alias)
    case _ => Seq(Leaf(alias.getOrElse(Nil), None, if (p.resolved) p.output.map(_.name.toLowerCase).toSet else Set.empty))
  }

  /**
   * Whether the relations below a node are what the node's columns resolve against: the relations
   * are resolved, and nothing between (but joins, filters and the like, which add no names) is
   * unresolved. A column reference above an unresolved join condition can be placed already.
   */
  private def usable(p: LogicalPlan): Boolean = p match {
    case s: SubqueryAlias => usable(s.child)
    case pr: Project if usingJoin(pr) => usable(pr.child)
    case j: Join => usable(j.left) && usable(j.right)
    case _ if relationId(p).isDefined => true
    case g: Generate => g.resolved // it adds the names of its output
    case _ if Relations.Passing(Nodes.shortName(p)) && p.children.size == 1 && Nodes.shortName(p) != "Window" => usable(p.children.head)
    case other => other.resolved
  }

  /** The relations an operator resolves its columns against; a Sort or a HAVING also looks below the projection under it, as Spark does. */
  private def scopeOf(op: LogicalPlan): Seq[Leaf] = {
    val direct = op.children.flatMap(c => leaves(c))
    val lookThrough = Nodes.shortName(op) match {
      case "Sort" | "Filter" | "UnresolvedHaving" => op.children.flatMap {
        case c @ (_: Project | _: Aggregate) => c.children.flatMap(g => leaves(g))
        case _ => Nil
      }
      case _ => Nil
    }
    direct ++ lookThrough
  }

  /** Names an operator defines itself (SELECT-list aliases), which its other expressions may use. */
  private def aliasesOf(op: LogicalPlan): Set[String] = {
    def of(p: LogicalPlan): Seq[String] = p match {
      case pr: Project => pr.projectList.collect { case a: Alias => a.name.toLowerCase }
      case ag: Aggregate => ag.aggregateExpressions.collect { case a: Alias => a.name.toLowerCase }
      case _ => Nil
    }
    (of(op) ++ (Nodes.shortName(op) match {
      case "Sort" | "Filter" | "UnresolvedHaving" => op.children.flatMap(of)
      case _ => Nil
    })).toSet
  }

  /**
   * Calls f on every column reference the analysis left unresolved where all below it is
   * resolved (not a lambda's variable), with its operator, its scopes (innermost first) and the
   * names the operator defines itself.
   */
  private def unresolved(plan: LogicalPlan)(f: (UnresolvedAttribute, LogicalPlan, List[Seq[Leaf]], Set[String]) => Unit): Unit = {
    def visit(p: LogicalPlan, outer: List[Seq[Leaf]], ready: Boolean): Unit = {
      Relations.inner(p).foreach(visit(_, outer, ready))
      val resolvedBelow = ready && p.children.forall(usable)
      val scopes = scopeOf(p) :: outer
      val aliases = aliasesOf(p)
      def expr(e: Expression, lambdas: Set[String], aliases: Set[String]): Unit = e match {
        case s: SubqueryExpression => visit(s.plan, scopes, resolvedBelow)
        case l: LambdaFunction =>
          val args = l.arguments.map(a => a.name.toLowerCase).toSet
          l.children.foreach(expr(_, lambdas ++ args, aliases))
        case u: UnresolvedAttribute if resolvedBelow && !lambdas(u.nameParts.head.toLowerCase) => f(u, p, scopes, aliases)
        case other => other.children.foreach(expr(_, lambdas, aliases))
      }
      // a SELECT-list item may use the aliases of the items before it (a lateral alias), never its own
      def before(list: Seq[NamedExpression], i: Int) = list.take(i).collect { case a: Alias => a.name.toLowerCase }.toSet
      (p match {
        case g: Generate => Seq(g.generator -> aliases) // its output names are names it defines
        case pr: Project => pr.projectList.indices.map(i => pr.projectList(i) -> before(pr.projectList, i))
        case ag: Aggregate => ag.groupingExpressions.map(_ -> aliases) ++
          ag.aggregateExpressions.indices.map(i => ag.aggregateExpressions(i) -> before(ag.aggregateExpressions, i))
        case _ => p.expressions.map(_ -> aliases)
      }).foreach { case (e, a) => expr(e, Set.empty, a) }
    }
    visit(plan, Nil, ready = true)
  }

  /**
   * Places every column reference the analysis left unresolved where all below it is resolved;
   * records an unqualified one that several inferred tables could hold. True when a column was added.
   */
  private def place(plan: LogicalPlan, reasons: mutable.LinkedHashSet[String]): Boolean = {
    var added = false
    unresolved(plan) { (u, _, scopes, aliases) => added |= placeOne(u.nameParts, at(u.origin.startIndex), scopes, aliases, reasons) }
    added
  }

  /** The relation of the innermost scope that has one which a qualified name's longest qualifier names, with the qualifier's length. */
  private def qualified(parts: Seq[String], scopes: List[Seq[Leaf]]): Option[(Leaf, Int)] =
    if (parts.size < 2) None
    else scopes.iterator.map { leaves =>
      (math.min(parts.size - 1, 3) to 1 by -1).iterator.flatMap { k =>
        val q = parts.take(k).map(_.toLowerCase)
        leaves.find(l => l.qualifier.size >= k && l.qualifier.takeRight(k).map(_.toLowerCase) == q).map(_ -> k)
      }.toSeq.headOption
    }.collectFirst { case Some(m) => m }

  /**
   * Why Spark's final analysis fails on a column of a table nobody described, each named with
   * where it stands: a reference the rounds could not place while such a table is in its scope,
   * or a function that cannot take the type the column's other uses gave it. A reference to a
   * relation that is known (a described table, a derived table) is left to Spark's own error.
   */
  private def unplaced(plan: LogicalPlan, reasons: mutable.LinkedHashSet[String]): Unit = {
    def where(e: Expression) = (e.origin.line, e.origin.startPosition) match {
      case (Some(l), Some(c)) => s" (line $l, column ${c + 1} of the statement)"
      case _ => ""
    }
    unresolved(plan) { (u, _, scopes, aliases) =>
      val knownRelation = qualified(u.nameParts, scopes).exists(_._1.table.isEmpty)
      val alias = u.nameParts.size == 1 && aliases(u.nameParts.head.toLowerCase)
      val visible = scopes.flatten.flatMap(_.table).distinct.map(_.id.unquotedString)
      if (!knownRelation && !alias && visible.nonEmpty)
        reasons += s"column ${u.nameParts.mkString(".")}${where(u)} is not resolved by Spark's analysis over ${visible.mkString(" or ")}, " +
          "which nobody described, with the columns and types inferred for it (a struct field of a column that is not a struct, " +
          "or a place where Spark does not look in that table): qualify it, or describe the table"
    }
    val refs = references(plan)
    allExpressions(plan).foreach(_.foreach {
      case x if x.childrenResolved && !x.resolved && Try(x.checkInputDataTypes().isFailure).getOrElse(false) =>
        x.children.flatMap(c => refOf(c, refs)).foreach { case (t, col, path) =>
          val name = pathName(col, path)
          val typ = t.schema(done = true).find(_.name.equalsIgnoreCase(col)).map(_.dataType.catalogString).getOrElse("?")
          reasons += s"column $name of ${t.id.unquotedString}, which nobody described${where(x)}: ${x.prettyName} cannot take it " +
            s"as $typ, the type inferred from its uses, and inference chooses no other for it: describe the table"
        }
      case _ =>
    })
  }

  private def placeOne(parts: Seq[String], pos: Long, scopes: List[Seq[Leaf]], aliases: Set[String], reasons: mutable.LinkedHashSet[String]): Boolean = {
    // qualified: the longest qualifier that names a relation of the innermost scope that has one
    qualified(parts, scopes) match {
      case Some((Leaf(_, Some(t), _), k)) => return t.add(parts(k), parts.drop(k + 1), pos)
      case Some(_) => return false // a relation that is known: Spark's own error
      case None =>
    }
    // unqualified (or a struct field of a column): a known relation of the innermost scope that has
    // the column holds it (Spark resolves it there); otherwise the only inferred relation of the
    // scopes up to the first whose known relation has it, which could hold it as well
    val name = parts.head.toLowerCase
    if (parts.size == 1 && aliases(name)) return false
    val outer = scopes.indexWhere(_.exists(l => l.table.isEmpty && l.names(name)))
    if (outer == 0) return false
    val upTo = if (outer < 0) scopes else scopes.take(outer + 1)
    val known = if (outer < 0) Nil else scopes(outer).filter(l => l.table.isEmpty && l.names(name)).map(l => l.qualifier.mkString("."))
    (upTo.flatten.flatMap(_.table).distinct, known) match {
      case (Seq(t), Seq()) => t.add(parts.head, parts.tail, pos)
      case (Seq(), _) => false
      case (many, _) =>
        reasons += ambiguous(parts.head, many.map(_.id.unquotedString), known)
        false
    }
  }

  // ---------------------------------------------------------------- types

  /** The inferred columns the plan's attributes stand for: exprId → (table, column name). */
  private def references(p: LogicalPlan): Map[ExprId, (Table, String, Seq[String])] = {
    val out = mutable.Map.empty[ExprId, (Table, String, Seq[String])]
    def visit(q: LogicalPlan): Unit = {
      relationId(q).flatMap(tables.get).foreach(t => q.output.foreach(a => out(a.exprId) = (t, a.name, Nil)))
      Relations.inner(q).foreach(visit)
      q.expressions.foreach(_.foreach { case s: SubqueryExpression => visit(s.plan); case _ => })
    }
    visit(p)
    // a new name for one (`id AS key`, an INSERT's column list) stands for it too: what Spark asks
    // of the name (the INSERT's cast to its column's type) it asks of the column
    val aliases = allExpressions(p).flatMap(_.collect { case a: Alias => a })
    // so does a column a generator makes of one: explode's of an element, inline's of a field of one
    val generates = Seq.newBuilder[Generate]
    def plans(q: LogicalPlan): Unit = {
      q match { case g: Generate if g.resolved => generates += g; case _ => }
      Relations.inner(q).foreach(plans)
      q.expressions.foreach(_.foreach { case s: SubqueryExpression => plans(s.plan); case _ => })
    }
    plans(p)
    var grown = true
    while (grown) {
      grown = false
      aliases.foreach { a =>
        if (!out.contains(a.exprId)) refOf(a.child, out.toMap).foreach { r => out(a.exprId) = r; grown = true }
      }
      generates.result().foreach { g =>
        g.generator.children.headOption.flatMap(refOf(_, out.toMap)).foreach { case (t, c, path) =>
          generated(g).foreach { case (a, steps) =>
            if (!out.contains(a.exprId)) { out(a.exprId) = (t, c, path ++ steps); grown = true }
          }
        }
      }
    }
    out.toMap
  }

  /** The columns a generator makes of an element of its array argument, each with its path in the argument. */
  private def generated(g: Generate): Seq[(Attribute, Seq[String])] = {
    val out = g.generatorOutput
    (g.generator, g.generator.children.headOption.map(_.dataType)) match {
      case (_: PosExplode, Some(_: ArrayType)) if out.size == 2 => Seq(out(1) -> Seq(ElementStep))
      case (_: Explode, Some(_: ArrayType)) if out.size == 1 => Seq(out.head -> Seq(ElementStep))
      case (x, Some(ArrayType(st: StructType, _))) if x.getClass.getSimpleName == "Inline" && st.size == out.size =>
        out.zip(st.fields).map { case (a, f) => a -> Seq(ElementStep, f.name) }
      case _ => Nil
    }
  }

  /** An expression that is an inferred column or a struct field of one: the table, column and field path. */
  private def refOf(e: Expression, refs: Map[ExprId, (Table, String, Seq[String])]): Option[(Table, String, Seq[String])] = e match {
    case a: Attribute if a.resolved => refs.get(a.exprId)
    case c: Cast if Try(c.child.resolved && c.child.dataType == c.dataType).getOrElse(false) => refOf(c.child, refs) // to its own type: the column unchanged
    case o: OuterReference => refOf(o.e, refs) // a correlated subquery's use of it
    case g: GetArrayItem => refOf(g.child, refs).map { case (t, c, path) => (t, c, path :+ ElementStep) }
    case g: GetMapValue => refOf(g.child, refs).map { case (t, c, path) => (t, c, path :+ ValueStep) }
    case g: GetStructField => refOf(g.child, refs).flatMap { case (t, c, path) =>
      g.name.orElse(Try(g.child.dataType.asInstanceOf[StructType].fields(g.ordinal).name).toOption).map(n => (t, c, path :+ n))
    }
    case _ => None
  }

  /**
   * What each name a plan makes stands for: an alias its expression; a column of an Expand (what
   * UNPIVOT, GROUPING SETS and ROLLUP become once analyzed) the expression at its position in each
   * of its projections (UNPIVOT's value column is each column it unpivots).
   */
  private def definitions(p: LogicalPlan): Map[ExprId, Seq[Expression]] = {
    val aliases = allExpressions(p).flatMap(_.collect { case a: Alias => a.exprId -> a.child })
    val expands = Seq.newBuilder[(ExprId, Expression)]
    def visit(q: LogicalPlan): Unit = {
      q match {
        case e: Expand => for (row <- e.projections; (a, x) <- e.output.zip(row) if !x.isInstanceOf[Attribute] || x.asInstanceOf[Attribute].exprId != a.exprId)
          expands += a.exprId -> x
        case _ =>
      }
      Relations.inner(q).foreach(visit)
      q.expressions.foreach(_.foreach { case s: SubqueryExpression => visit(s.plan); case _ => })
    }
    visit(p)
    (aliases ++ expands.result()).groupBy(_._1).map { case (id, xs) => id -> xs.map(_._2) }
  }

  private def allExpressions(p: LogicalPlan): Seq[Expression] = {
    val out = Seq.newBuilder[Expression]
    def visit(q: LogicalPlan): Unit = {
      Relations.inner(q).foreach(visit)
      q.expressions.foreach { e =>
        out += e
        e.foreach { case s: SubqueryExpression => visit(s.plan); case _ => }
      }
    }
    visit(p)
    out.result()
  }

  /** Casts Spark's coercion put on columns of no type yet: the column takes the cast's type. */
  private def learn(p: LogicalPlan, refs: Map[ExprId, (Table, String, Seq[String])]): Boolean = {
    var changed = false
    // the columns of no type yet whose type an expression of no type has: it is theirs, passed on
    // unchanged (`max(amount)`, `lag(amount)`, `coalesce(a, b)`), so a cast of it asks theirs
    val named = definitions(p)
    def typeless(e: Expression, depth: Int = 0): Seq[(Table, String, Seq[String])] = refOf(e, refs) match {
      case Some(r) => Seq(r)
      case None if depth < 64 && Try(e.resolved && e.dataType == NullType).getOrElse(false) => e match {
        case a: Attribute => named.getOrElse(a.exprId, Nil).flatMap(typeless(_, depth + 1))
        case _ => e.children.flatMap(typeless(_, depth + 1))
      }
      case None => Nil
    }
    allExpressions(p).foreach(_.foreach {
      case c: Cast => (refOf(c.child, refs).toSeq ++ (if (Try(c.child.dataType == NullType).getOrElse(false)) typeless(c.child) else Nil))
        .distinct.foreach { case (t, col, path) => changed |= t.set(col, path, c.dataType) }
      case _ =>
    })
    changed
  }

  /** Functions whose argument must be of a kind (an array, a map, a number) that a column of no type yet, or of the default string, is not. */
  private def mismatches(p: LogicalPlan, refs: Map[ExprId, (Table, String, Seq[String])]): Boolean = {
    var changed = false
    def want(e: Expression, t: DataType): Unit = refOf(e, refs).foreach { case (tb, col, path) => changed |= tb.retype(col, path, t) }
    def visitPlan(q: LogicalPlan): Unit = {
      Relations.inner(q).foreach(visitPlan)
      val outputs = q match {
        case g: Generate => Some(g.generatorOutput.map(_.name))
        case _ => None
      }
      q.expressions.foreach(e => visitExpr(e, outputs))
    }
    def visitExpr(e: Expression, outputs: Option[Seq[String]]): Unit = {
      e match {
        case s: SubqueryExpression => visitPlan(s.plan)
        case m: MultiAlias => m.child match {
          case g if generates(g) => generator(g, Some(m.names))
          case _ =>
        }
        case g if generates(g) => generator(g, outputs)
        case x: ExpectsInputTypes if x.childrenResolved && !x.resolved && Try(x.checkInputDataTypes().isFailure).getOrElse(false) =>
          x.children.zip(x.inputTypes).foreach { case (c, expected) => concrete(expected).foreach(want(c, _)) }
        case _ =>
      }
      e.children.foreach(visitExpr(_, None))
    }
    def generator(g: Expression, outputs: Option[Seq[String]]): Unit = if (g.childrenResolved && !g.resolved) g match {
      case _: Explode | _: PosExplode =>
        val asMap = outputs.exists(n => n.size == (if (g.isInstanceOf[PosExplode]) 3 else 2))
        want(g.children.head, if (asMap) MapType(NullType, NullType) else ArrayType(NullType))
      // inline(a): an array of structs, one field per column it makes; the names its columns are
      // given stand for the fields' (which a renaming list hides: any names give the same analysis)
      case _ => outputs.filter(_.nonEmpty).foreach(names =>
        want(g.children.head, ArrayType(StructType(names.map(n => StructField(n, NullType))))))
    }
    def generates(g: Expression) = g.isInstanceOf[Explode] || g.isInstanceOf[PosExplode] || g.getClass.getSimpleName == "Inline"
    visitPlan(p)
    changed
  }

  private def concrete(expected: AnyRef): Option[DataType] =
    Reflect.call(expected, "defaultConcreteType").collect { case d: DataType => d }
}

private[listener] object Inference {
  val MaxRounds = 12
  /** Passes over a request: one, and one more for each revision of a type chosen by default (`Inference.revised`). */
  val MaxPasses = 3
  private[analyze] val debug = sys.env.contains("COLLINE_ANALYZE_DEBUG")
  /** The one column of an inferred table none of whose columns a statement references (Spark needs one). */
  val Placeholder = "__colline_no_column__"
  private val globalTemp = "global_temp"

  sealed trait Prepared
  /** The statement reads no table that nobody described. */
  case object NoInference extends Prepared
  /** The tables the statement needed inferred, with their columns as now defined. */
  final case class Ready(tables: Seq[(TableIdentifier, StructType)], analyzed: Option[LogicalPlan], rounds: Int) extends Prepared
  /** What cannot be inferred, each with its name and reason: the statement keeps table-level lineage. */
  final case class TableLevel(reasons: Seq[String]) extends Prepared

  def norm(id: TableIdentifier): TableIdentifier = TableIdentifier(id.table.toLowerCase, id.database.map(_.toLowerCase))

  def ambiguous(column: String, tables: Seq[String], known: Seq[String] = Nil): String =
    s"column $column is not qualified and could be a column of ${tables.mkString(" or ")}, which nobody described" +
      known.map(k => s", or of $k (an enclosing query's)").mkString + s": qualify it (${tables.head.split('.').last}.$column)"

  /** Whether `t.*`'s target names a relation of a FROM clause (its alias, or the end of its name). */
  def names(f: Relations.From, target: Seq[String]): Boolean = f.alias match {
    case Some(a) => target.size == 1 && target.head.equalsIgnoreCase(a)
    case None => target.size <= f.parts.size && f.parts.takeRight(target.size).map(_.toLowerCase) == target.map(_.toLowerCase)
  }

  /** Whether a type still holds a part of no type (NullType). */
  def open(t: DataType): Boolean = t match {
    case NullType => true
    case s: StructType => s.fields.exists(f => open(f.dataType))
    case a: ArrayType => open(a.elementType)
    case m: MapType => open(m.keyType) || open(m.valueType)
    case _ => false
  }

  /** The type with each part of no type a string. */
  def settled(t: DataType): DataType = t match {
    case NullType => StringType
    case s: StructType => StructType(s.fields.map(f => f.copy(dataType = settled(f.dataType))))
    case a: ArrayType => a.copy(elementType = settled(a.elementType))
    case m: MapType => m.copy(keyType = settled(m.keyType), valueType = settled(m.valueType))
    case other => other
  }

  /** In a column's path, an array's element and a map's value (no field name: a name has no NUL). */
  val ElementStep = "\u0000[]"
  val ValueStep = "\u0000{}"

  /** A column's path as SQL writes it: a.b[0].c, m['k'] shown as m[…]. */
  def pathName(col: String, path: Seq[String]): String =
    col + path.map { case ElementStep => "[0]"; case ValueStep => "[…]"; case f => "." + f }.mkString

  /** The type with the part at a path (struct fields, array elements, map values) replaced, when `replace` says so of the part there. */
  def at(t: DataType, path: Seq[String], replace: DataType => Option[DataType]): Option[DataType] = path match {
    case Seq() => replace(t)
    case Seq(f, rest @ _*) => t match {
      case a: ArrayType if f == ElementStep => at(a.elementType, rest, replace).map(e => a.copy(elementType = e))
      case m: MapType if f == ValueStep => at(m.valueType, rest, replace).map(v => m.copy(valueType = v))
      case s: StructType => s.fields.indexWhere(_.name.equalsIgnoreCase(f)) match {
        case -1 => None
        case i => at(s.fields(i).dataType, rest, replace).map(ft => StructType(s.fields.updated(i, s.fields(i).copy(dataType = ft))))
      }
      case _ => None
    }
  }

  /** A table being inferred: its columns, each with its type so far, in the order the statements first name them. */
  final class Table(val id: TableIdentifier) {
    private val columns = mutable.LinkedHashMap.empty[String, (String, DataType)]
    /** Where the statements first name each column (statement, then position in its text); ties keep the order met. */
    private val first = mutable.Map.empty[String, Long]
    /** Columns whose type is the default string, which a function may still make an array or a map. */
    private val defaulted = mutable.Map.empty[String, Long] // → the statement that made it a string
    var dirty = true
    /** Whether the table is in the catalog already (then only its columns change). */
    var defined = false
    /** The schema it is defined with in the catalog. */
    var definedAs: Option[StructType] = None
    /** The earliest statement whose default string a later use replaced (Long.MaxValue: none). */
    var revisedFrom = Long.MaxValue

    def add(name: String, path: Seq[String], pos: Long): Boolean = {
      val k = name.toLowerCase
      if (first.get(k).forall(pos < _)) {
        if (first.contains(k)) dirty = true // the order changes
        first(k) = pos
      }
      val (n, t) = columns.getOrElse(k, (name, NullType))
      shaped(t, path.map(Field)) match {
        case Some(nt) if !columns.contains(k) || nt != t =>
          columns(k) = (n, nt); dirty = true; true
        case _ => false
      }
    }

    /** The type a cast asks of a part of no type yet. */
    def set(name: String, path: Seq[String], t: DataType): Boolean = columns.get(name.toLowerCase) match {
      case Some((n, cur)) =>
        // a string by default that Spark's coercion casts to another type: a use needs that type
        val k = name.toLowerCase
        val fromDefault = path.isEmpty && cur == StringType && defaulted.contains(k) && t != StringType && !open(t)
        if (fromDefault) {
          columns(k) = (n, t); revisedFrom = math.min(revisedFrom, defaulted(k)); defaulted -= k; dirty = true; true
        } else at(cur, path, part => if (part == NullType || (open(part) && !open(t) && sameKind(part, t))) Some(t) else None) match {
          case Some(nt) if nt != cur => columns(k) = (n, nt); dirty = true; true
          case _ => false
        }
      case None => false
    }

    /** The kind of value a function needs of a part of no type yet, or of one that is a string by default. */
    def retype(name: String, path: Seq[String], t: DataType): Boolean = {
      val k = name.toLowerCase
      columns.get(k) match {
        case Some((n, cur)) =>
          val key = (k +: path.map(_.toLowerCase)).mkString(".")
          at(cur, path, part => if (part == NullType || (defaulted.contains(key) && part == StringType)) Some(t) else None) match {
            case Some(nt) if nt != cur => columns(k) = (n, nt); defaulted -= key; dirty = true; true
            case _ => false
          }
        case None => false
      }
    }

    /** A later statement's type for a column that was a string by default: true when it changes. */
    def revise(name: String, path: Seq[String], t: DataType): Option[Long] = {
      val k = name.toLowerCase
      val key = (k +: path.map(_.toLowerCase)).mkString(".")
      val since = defaulted.get(key)
      if (open(t)) return None
      columns.get(k).flatMap { case (n, cur) =>
        at(cur, path, {
          case StringType if since.isDefined && t != StringType => Some(t)
          // a struct known by the fields the statements name, written where a struct with those
          // fields and more goes: it is that struct
          case st: StructType if st != t && fits(st, t) => Some(t)
          case _ => None
        }) match {
          case Some(nt) if nt != cur =>
            columns(k) = (n, nt); defaulted -= key; dirty = true
            Some(since.getOrElse(first.getOrElse(k, 0L) >>> 32))
          case _ => None
        }
      }
    }

    /** Struct fields the statement names on a column (`a.b.c`), before Spark's analysis would fail on them. */
    def fields(qualifiers: Set[String], parsed: LogicalPlan, at: Option[Int] => Long): Unit = {
      def visit(p: LogicalPlan): Unit = { Relations.inner(p).foreach(visit); p.expressions.foreach(expr) }
      def expr(e: Expression): Unit = e.foreach {
        case s: SubqueryExpression => visit(s.plan)
        case u: UnresolvedAttribute =>
          column(u.nameParts).foreach { case (c, path) => if (path.nonEmpty) add(c, path, at(u.origin.startIndex)) }
        case x: UnresolvedExtractValue => steps(x).foreach { case (c, st) => shape(c, st) }
        case _ =>
      }
      // a[0] is an element of an array, a['k'] a value of a map, x.f (x not a name: a[0].f) a struct field
      def steps(e: Expression): Option[(String, Seq[Step])] = e match {
        case u: UnresolvedAttribute => column(u.nameParts).map { case (c, path) => c -> path.map(Field) }
        case x: UnresolvedExtractValue => steps(x.child).flatMap { case (c, st) => x.extraction match {
          case Literal(_, IntegerType | LongType | ShortType | ByteType) => Some(c -> (st :+ Element))
          case Literal(v, StringType) if !x.child.isInstanceOf[UnresolvedAttribute] && !subscript(x) => Some(c -> (st :+ Field(v.toString)))
          case Literal(_, StringType) => Some(c -> (st :+ Value))
          case _ => None
        } }
        case _ => None
      }
      /** The column a name path starts at (after its qualifiers), and the struct fields after it. */
      def column(parts: Seq[String]): Option[(String, Seq[String])] =
        parts.indices.filter(i => columns.contains(parts(i).toLowerCase) && parts.take(i).forall(q => qualifiers(q.toLowerCase)))
          .lastOption.map(i => parts(i) -> parts.drop(i + 1)) // the longest qualifier, as Spark reads a name
      visit(parsed)
    }

    /**
     * The shape a path of struct fields, array elements and map values asks of a column: its parts
     * of no type (or its own default string) take it; a struct met by fields only becomes an array
     * of it where an element is asked (Spark reads `a.f` on an array of structs too), and a field of
     * an array is a field of its elements. A path the type cannot have changes nothing (Spark's error).
     */
    def shape(name: String, steps: Seq[Step]): Unit = {
      val k = name.toLowerCase
      columns.get(k).foreach { case (n, cur) =>
        val base = if (cur == StringType && defaulted.contains(k)) NullType else cur
        shaped(base, steps).filter(_ != cur).foreach { nt =>
          columns(k) = (n, nt); defaulted -= k; dirty = true
        }
      }
    }

    /** What no expression constrained becomes a string. */
    def settle(now: Long): Unit = columns.foreach { case (k, (n, t)) =>
      if (open(t)) {
        columns(k) = (n, settled(t))
        dirty = true
        if (t == NullType) defaulted(k) = now
      }
    }

    def isSettled: Boolean = columns.values.forall { case (_, t) => !open(t) }

    /**
     * The columns as a statement sees them: those the statements up to it name (a pass after a
     * revision knows the later ones too, which the earlier statements must not see), in order.
     */
    def schema(done: Boolean, upTo: Long = Long.MaxValue): StructType = {
      val ordered = columns.toSeq.filter { case (k, _) => first.get(k).forall(f => (f >>> 32) <= upTo) }.zipWithIndex.sortBy { case ((k, _), i) => (first.getOrElse(k, Long.MaxValue), i) }.map(_._1._2)
      val fields = ordered.map { case (n, t) => StructField(n, if (done) settled(t) else t, nullable = true) }
      StructType(if (fields.isEmpty) Seq(StructField(Placeholder, StringType, nullable = true)) else fields)
    }
  }

  /** A step into a column's value: a struct field, an array's element, a map's value. */
  sealed trait Step
  final case class Field(name: String) extends Step
  case object Element extends Step
  case object Value extends Step

  /** The type with a path of steps added (see Table.shape). */
  def shaped(t: DataType, steps: Seq[Step]): Option[DataType] = steps match {
    case Seq() => Some(t)
    case Seq(Field(f), rest @ _*) => t match {
      case NullType => shaped(NullType, rest).map(ft => StructType(Seq(StructField(f, ft))))
      case s: StructType => s.fields.indexWhere(_.name.equalsIgnoreCase(f)) match {
        case -1 => shaped(NullType, rest).map(ft => StructType(s.fields :+ StructField(f, ft)))
        case i => shaped(s.fields(i).dataType, rest).map(ft => StructType(s.fields.updated(i, s.fields(i).copy(dataType = ft))))
      }
      case a: ArrayType => shaped(a.elementType, steps).map(e => a.copy(elementType = e))
      case _ => None
    }
    case Seq(Element, rest @ _*) => t match {
      case NullType => shaped(NullType, rest).map(ArrayType(_))
      case a: ArrayType => shaped(a.elementType, rest).map(e => a.copy(elementType = e))
      case s: StructType => shaped(s, rest).map(ArrayType(_))
      case _ => None
    }
    case Seq(Value, rest @ _*) => t match {
      case NullType => shaped(NullType, rest).map(MapType(StringType, _))
      case m: MapType => shaped(m.valueType, rest).map(v => m.copy(valueType = v))
      case _ => None
    }
  }

  /** Whether an extraction is written `x[...]` (a subscript) rather than `x.f`, as the statement's text says where Spark kept it. */
  def subscript(x: Expression): Boolean = (x.origin.sqlText, x.origin.stopIndex) match {
    case (Some(text), Some(stop)) if stop >= 0 && stop < text.length => text.charAt(stop) == ']'
    case _ => false
  }

  /** Whether a type inferred from a column's uses is a part of a described one: its struct fields are there, its types the same (or of no type, or a string, maybe by default). */
  def fits(inferred: DataType, target: DataType): Boolean = (inferred, target) match {
    case (NullType, _) => true
    case (StringType, _: StructType | _: ArrayType | _: MapType) => false
    case (StringType, _) => true
    case (s: StructType, t: StructType) => s.fields.forall(f => t.fields.find(_.name.equalsIgnoreCase(f.name)).exists(g => fits(f.dataType, g.dataType)))
    case (a: ArrayType, b: ArrayType) => fits(a.elementType, b.elementType)
    case (a: MapType, b: MapType) => fits(a.keyType, b.keyType) && fits(a.valueType, b.valueType)
    case (a, b) => a == b
  }

  /** Whether a learned type fits an open part: an array for an array, a map for a map, a struct for a struct. */
  private def sameKind(open: DataType, t: DataType): Boolean = (open, t) match {
    case (_: ArrayType, _: ArrayType) | (_: MapType, _: MapType) | (_: StructType, _: StructType) => true
    case _ => false
  }
}
