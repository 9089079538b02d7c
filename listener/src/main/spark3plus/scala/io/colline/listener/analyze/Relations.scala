package io.colline.listener.analyze

import scala.collection.mutable

import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.analysis.{UnresolvedRelation, UnresolvedStar}
import org.apache.spark.sql.catalyst.expressions.{Expression, SubqueryExpression}
import org.apache.spark.sql.catalyst.plans.{NaturalJoin, UsingJoin}
import org.apache.spark.sql.catalyst.plans.logical.{InsertIntoStatement, Join, LogicalPlan, SubqueryAlias}

import io.colline.listener.{Nodes, Reflect}

/** A relation a parsed statement names: its name parts as written, and whether the statement writes it. */
private[listener] final case class Ref(parts: Seq[String], written: Boolean)

/**
 * What a parsed statement (Spark's parser's plan, before analysis) names: the relations it reads
 * and writes, the CTEs it defines, the table or view it creates, the namespace it `USE`s, its
 * `*`s and joins. Parsing only: nothing is resolved here, so the answers hold for any catalog.
 */
private[listener] object Relations {
  /** Parsed roots that define a table or view (CREATE TABLE, CTAS, CREATE VIEW, temporary views, CACHE TABLE … AS). */
  private val Definers = Set("CreateTable", "CreateTableStatement", "CreateTableAsSelect", "CreateTableAsSelectStatement",
    "ReplaceTable", "ReplaceTableStatement", "ReplaceTableAsSelect", "ReplaceTableAsSelectStatement", "CreateView",
    "CreateViewCommand", "CreateViewStatement", "CacheTableAsSelect", "CreateTableLikeCommand")

  /** Parsed roots that write rows into a table they name (the target is a child). */
  private val Writers = Set("MergeIntoTable", "UpdateTable", "DeleteFromTable")

  /** Every relation the statement names, in plan order (subqueries, CTE definitions and write targets included), but its own CTEs. */
  def refs(parsed: LogicalPlan): Seq[Ref] = {
    val ctes = cteNames(parsed)
    val out = mutable.LinkedHashSet.empty[Ref]
    def plan(p: LogicalPlan, written: Boolean): Unit = p match {
      case u: UnresolvedRelation =>
        if (!(u.multipartIdentifier.size == 1 && ctes(u.multipartIdentifier.head.toLowerCase))) out += Ref(u.multipartIdentifier, written)
      case i: InsertIntoStatement =>
        plan(i.table, written = true)
        plan(i.query, written = false)
      case w if Writers(Nodes.shortName(w)) =>
        w.children.headOption.foreach(plan(_, written = true))
        w.children.drop(1).foreach(plan(_, written = false))
        exprs(w)
      case _ =>
        inner(p).foreach(plan(_, written = false))
        exprs(p)
    }
    def exprs(p: LogicalPlan): Unit = p.expressions.foreach(_.foreach {
      case s: SubqueryExpression => plan(s.plan, written = false)
      case _ =>
    })
    plan(parsed, written = false)
    out.toSeq
  }

  /** The plans of a node: its children and the plans it holds otherwise (CTE definitions, a CTAS's query, …). */
  def inner(p: LogicalPlan): Seq[LogicalPlan] = {
    val seen = mutable.LinkedHashSet.empty[LogicalPlan]
    def take(x: Any): Unit = x match {
      case q: LogicalPlan => seen += q
      case s: Iterable[_] => s.foreach(take)
      case o: Option[_] => o.foreach(take)
      case t: Product if t.productArity <= 3 && t.getClass.getName.startsWith("scala.Tuple") => t.productIterator.foreach(take)
      case _ =>
    }
    p.children.foreach(take)
    p.productIterator.foreach(take)
    seen.toSeq
  }

  /** The names of the CTEs the statement defines anywhere (lower-cased). */
  def cteNames(parsed: LogicalPlan): Set[String] = {
    val out = mutable.Set.empty[String]
    def visit(p: LogicalPlan): Unit = {
      if (Nodes.shortName(p) == "UnresolvedWith") Reflect.call(p, "cteRelations").foreach {
        case s: Seq[_] => s.foreach {
          case t: Product => t.productElement(0) match { case n: String => out += n.toLowerCase; case _ => }
          case _ =>
        }
        case _ =>
      }
      inner(p).foreach(visit)
      p.expressions.foreach(_.foreach { case s: SubqueryExpression => visit(s.plan); case _ => })
    }
    visit(parsed)
    out.toSet
  }

  /** The table or view the statement creates: its name parts, and whether it is temporary. */
  def defined(parsed: LogicalPlan): Option[(Seq[String], Boolean)] = {
    val kind = Nodes.shortName(parsed)
    if (!Definers(kind)) return None
    val temporary = kind == "CacheTableAsSelect" ||
      Reflect.call(parsed, "viewType").exists(v => Nodes.shortName(v) != "PersistedView")
    def parts(x: AnyRef): Option[Seq[String]] = x match {
      case id: TableIdentifier => Some(id.database.toSeq :+ id.table)
      case s: String => Some(Seq(s))
      case s: Seq[_] if s.nonEmpty && s.forall(_.isInstanceOf[String]) => Some(s.map(_.toString))
      case p: LogicalPlan => Some(Reflect.strings(p, "nameParts")).filter(_.nonEmpty)
      case _ => None
    }
    Seq("name", "tableName", "tempViewName", "targetTable", "child").iterator
      .flatMap(m => Reflect.call(parsed, m).flatMap(parts)).toSeq.headOption.map(_ -> temporary)
  }

  /** The namespace a `USE` sets (the session catalog's), parts as written. */
  def use(parsed: LogicalPlan): Option[Seq[String]] = Nodes.shortName(parsed) match {
    case "SetCatalogAndNamespace" => parsed.children.headOption.map(c => Reflect.strings(c, "multipartIdentifier")).filter(_.nonEmpty)
    case "SetNamespaceCommand" => Some(Reflect.strings(parsed, "namespace")).filter(_.nonEmpty)
    case _ => None
  }

  /** The aliases and table names the statement uses as qualifiers anywhere (lower-cased last parts). */
  def qualifiers(parsed: LogicalPlan): Set[String] = {
    val out = mutable.Set.empty[String]
    def visit(p: LogicalPlan): Unit = {
      p match {
        case s: SubqueryAlias => out += s.alias.toLowerCase
        case u: UnresolvedRelation => out ++= u.multipartIdentifier.map(_.toLowerCase)
        case _ =>
      }
      inner(p).foreach(visit)
      p.expressions.foreach(_.foreach { case s: SubqueryExpression => visit(s.plan); case _ => })
    }
    visit(parsed)
    out.toSet
  }

  /** A relation as a FROM clause holds it: its name parts and the alias it goes by, if any. */
  final case class From(parts: Seq[String], alias: Option[String])

  /**
   * The relations that a FROM clause reads directly, below p: through aliases, joins, filters and
   * the other nodes that pass their child's columns on, not into derived tables.
   */
  def from(p: LogicalPlan, alias: Option[String] = None): Seq[From] = p match {
    case u: UnresolvedRelation => Seq(From(u.multipartIdentifier, alias))
    case s: SubqueryAlias => from(s.child, alias.orElse(Some(s.alias)))
    case j: Join => from(j.left) ++ from(j.right)
    case _ if Passing(Nodes.shortName(p)) && p.children.size == 1 => from(p.children.head, alias)
    case _ => Nil
  }

  /** Parsed and analyzed nodes that pass their child's columns on (a FROM clause looks through them). */
  val Passing: Set[String] = Set("Filter", "Sort", "GlobalLimit", "LocalLimit", "Limit", "Offset", "Distinct", "Sample",
    "Repartition", "RepartitionByExpression", "RebalancePartitions", "ResolvedHint", "UnresolvedHint", "Deduplicate",
    "Generate", "Window", "UnresolvedHaving", "Tail", "SubqueryAlias")

  /**
   * The `*`s of the statement that expand over relations (a SELECT list, `struct(*)`, …; not
   * `count(*)`), each with the FROM clause it expands over and its target (`t.*`), if any.
   */
  def stars(parsed: LogicalPlan): Seq[(Option[Seq[String]], Seq[From])] = {
    val out = Seq.newBuilder[(Option[Seq[String]], Seq[From])]
    def visit(p: LogicalPlan): Unit = {
      val scope = p.children.flatMap(c => from(c))
      def expr(e: Expression, inCount: Boolean): Unit = e match {
        case s: UnresolvedStar if !inCount => out += (s.target -> scope)
        case s: SubqueryExpression => visit(s.plan)
        case f if Nodes.shortName(f) == "UnresolvedFunction" =>
          val count = Reflect.strings(f, "nameParts").lastOption.exists(_.equalsIgnoreCase("count")) ||
            Reflect.call(f, "name").exists(n => String.valueOf(n).toLowerCase.endsWith("count"))
          f.children.foreach(expr(_, count && f.children.size == 1))
        case other => other.children.foreach(expr(_, inCount = false))
      }
      p.expressions.foreach(expr(_, inCount = false))
      inner(p).foreach(visit)
    }
    visit(parsed)
    out.result()
  }

  /** The joins of the statement by USING (with their column names) and NATURAL joins (no names), each with its two sides. */
  def usingJoins(parsed: LogicalPlan): Seq[(Seq[String], Seq[From], Seq[From], Boolean)] = {
    val out = Seq.newBuilder[(Seq[String], Seq[From], Seq[From], Boolean)]
    def visit(p: LogicalPlan): Unit = {
      p match {
        case j: Join => j.joinType match {
          case UsingJoin(_, names) => out += ((names, from(j.left), from(j.right), false))
          case NaturalJoin(_) => out += ((Nil, from(j.left), from(j.right), true))
          case _ =>
        }
        case _ =>
      }
      inner(p).foreach(visit)
      p.expressions.foreach(_.foreach { case s: SubqueryExpression => visit(s.plan); case _ => })
    }
    visit(parsed)
    out.result()
  }
}
