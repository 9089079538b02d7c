package io.colline.listener.analyze

import scala.concurrent.duration.Duration

import io.colline.listener.J

/**
 * Inferred schemas on a real local Spark: each rule that places a column, each type Spark's
 * analysis asks of one, and each case that cannot be inferred, named with its reason.
 */
class InferenceTest extends munit.FunSuite {
  import TestAnalyzer._

  override val munitTimeout: Duration = Duration(10, "min")

  private def sql(text: String, conf: Seq[(String, String)] = Nil): Seq[J.Obj] =
    statements(files(TestAnalyzer.run(Request(reads = true, infer = true, conf = conf, files = Seq(Part("t.sql", text))))).head)

  private def objs(j: Option[J]): Seq[J.Obj] = j.collect { case a: J.Arr => a.items.collect { case o: J.Obj => o }.toSeq }.getOrElse(Nil)

  /** Every expression of an event's nodes, children and all. */
  private def exprs(node: J.Obj): Seq[J.Obj] = {
    def walk(e: J.Obj): Seq[J.Obj] = e +: objs(e.get("children")).flatMap(walk)
    obj(node, "exprs").toSeq.flatMap(_.fields.toSeq.flatMap { case (_, v) => objs(Some(v)) }).flatMap(walk)
  }

  private def num(o: J.Obj, k: String): Long = o.get(k).collect { case J.Num(n) => n }.getOrElse(-1L)

  /**
   * The casts Spark's analysis put on a column of an inferred table to another type: none when the
   * inferred types are the ones Spark's coercion asked, so that the analysis (and the lineage) is
   * the one of a table that has them.
   */
  private def castsOnInferred(st: J.Obj): Seq[String] = {
    val nodes = objs(st.get("events")).flatMap(e => objs(e.get("nodes")))
    val inferredIds = nodes.filter(n => obj(n, "dataset").exists(d => bool(d, "inferred").contains(true)))
      .flatMap(n => objs(n.get("output")).map(num(_, "exprId"))).toSet
    nodes.flatMap(exprs).filter(e => str(e, "class") == "Cast").flatMap { c =>
      objs(c.get("children")).filter(a => str(a, "class") == "AttributeReference" && inferredIds(num(a, "exprId")) && str(a, "type") != str(c, "type"))
        .map(a => s"${str(a, "name")} ${str(a, "type")} -> ${str(c, "type")}")
    }
  }

  /** The expressions named after a column in the event, as Spark's SQL of them (literals are `?`). */
  private def named(st: J.Obj, column: String): Seq[String] = {
    val nodes = objs(st.get("events")).flatMap(e => objs(e.get("nodes")))
    nodes.flatMap(exprs).filter(e => str(e, "class") == "Alias" && str(e, "name") == column).map(str(_, "sql"))
  }

  /** The inferred tables of a statement: "db.t(col type, …)". */
  private def inferred(st: J.Obj): Seq[String] = st.get("inferred").collect { case a: J.Arr =>
    a.items.collect { case t: J.Obj =>
      val cols = t.get("columns").collect { case c: J.Arr => c.items.collect { case o: J.Obj => s"${str(o, "name")} ${str(o, "type")}" } }
        .getOrElse(Nil)
      s"${str(t, "database")}.${str(t, "table")}(${cols.mkString(", ")})"
    }.toSeq
  }.getOrElse(Nil)

  private def reasons(st: J.Obj): String = str(st, "reason")

  test("columns go to the relation their qualifier names; unqualified, to the only table nobody described") {
    val Seq(st) = sql("INSERT INTO base.t SELECT o.amount, c.name FROM shop.orders o JOIN shop.customers c ON o.cid = c.id WHERE o.status = 'open'")
    assertEquals(str(st, "outcome"), "event", J.render(st))
    assertEquals(inferred(st).sorted, Seq("shop.customers(name string, id string)", "shop.orders(amount int, cid string, status string)"), J.render(st))
    val Seq(one) = sql("INSERT INTO base.t SELECT amount, b FROM shop.orders JOIN base.t ON shop.orders.k = base.t.a")
    assertEquals(inferred(one), Seq("shop.orders(amount int, k int)"), J.render(one))
  }

  test("the types Spark's coercion asks (aggregates, comparisons, arithmetic, unions): no cast left on an inferred column, ANSI mode or not") {
    for (ansi <- Seq("false", "true")) {
      val Seq(st) = sql("CREATE TABLE base.o USING parquet AS SELECT s.kind, sum(s.amount) AS total, s.id + 1 AS next " +
        "FROM src s GROUP BY s.kind, s.id HAVING sum(s.amount) > 100 UNION ALL SELECT 'x', 1.5D, 2L", Seq("spark.sql.ansi.enabled" -> ansi))
      assertEquals(str(st, "outcome"), "event", s"ansi $ansi: " + J.render(st))
      // the columns the statement names, in its order; each typed as the analysis asked of it, so it adds no cast
      val Seq(src) = inferred(st)
      assertEquals(src.replaceAll(" [a-z]+(,|\\))", "$1"), "default.src(kind, amount, id)", src)
      assertEquals(castsOnInferred(st), Nil, s"ansi $ansi: " + J.render(st))
      // the lineage: total is the sum of amount, next is id plus one (no conversion between)
      assert(named(st, "total").contains("sum(s.amount) AS total"), J.render(st))
      assert(named(st, "next").contains("(s.id + ?) AS next"), J.render(st))
    }
  }

  test("struct fields, arrays for explode and size, a LATERAL VIEW's names are its own") {
    val Seq(st) = sql("CREATE TABLE base.n USING parquet AS SELECT t.id, t.address.city, size(t.phones), tag FROM shop.people t " +
      "LATERAL VIEW explode(t.tags) x AS tag")
    assertEquals(str(st, "outcome"), "event", J.render(st))
    assertEquals(inferred(st), Seq("shop.people(id string, address struct<city:string>, phones array<string>, tags array<string>)"), J.render(st))
  }

  test("CTEs, subqueries and correlated references, USING joins") {
    val Seq(a, b) = sql(
      """CREATE TABLE base.c USING parquet AS WITH w AS (SELECT o.id, o.amount FROM shop.orders o WHERE EXISTS
        |  (SELECT 1 FROM shop.items i WHERE i.oid = o.id)) SELECT w.id, w.amount FROM w;
        |CREATE TABLE base.u USING parquet AS SELECT id, l.x, r.y FROM shop.l l JOIN shop.r r USING (id)""".stripMargin)
    assertEquals(Seq(str(a, "outcome"), str(b, "outcome")), Seq("event", "event"), J.render(a) + J.render(b))
    assertEquals(inferred(a).sorted, Seq("shop.items(oid string)", "shop.orders(id string, amount string)"), J.render(a))
    assertEquals(inferred(b).sorted, Seq("shop.l(id string, x string)", "shop.r(id string, y string)"), J.render(b))
  }

  test("what cannot be inferred is named with its reason, the statement keeps table-level lineage") {
    val sts = sql(
      """INSERT INTO base.t SELECT * FROM shop.a;
        |CREATE TABLE base.j USING parquet AS SELECT x FROM shop.a JOIN shop.b ON shop.a.k = shop.b.k;
        |CREATE TABLE base.k USING parquet AS SELECT a.x FROM shop.a a NATURAL JOIN shop.b b;
        |INSERT INTO shop.target SELECT a FROM base.t;
        |CREATE TABLE base.m USING parquet AS SELECT k, y FROM shop.a JOIN shop.b USING (k);
        |CREATE TABLE base.s USING parquet AS SELECT s.a.b FROM src s WHERE upper(s.a) = 'X'""".stripMargin)
    assertEquals(sts.map(str(_, "outcome")), Seq.fill(6)("tableLevel"), sts.map(J.render(_)).mkString("\n"))
    assert(reasons(sts(0)).contains("* over shop.a, which nobody described"), reasons(sts(0)))
    assert(reasons(sts(1)).contains("column x is not qualified and could be a column of shop.a or shop.b"), reasons(sts(1)))
    assert(reasons(sts(2)).contains("NATURAL JOIN with shop.a"), reasons(sts(2)))
    assert(reasons(sts(3)).contains("INSERT INTO shop.target, which nobody described, by position"), reasons(sts(3)))
    // the USING column k is on both sides; y could be on either
    assertEquals(reasons(sts(4)), "column y is not qualified and could be a column of shop.a or shop.b, which nobody described: qualify it (a.y)")
    // a column used as a struct and as a string: no type satisfies both, and the answer says so rather than report Spark's error on a made-up type
    assert(reasons(sts(5)).contains("column a of default.src, which nobody described (line 1, column"), reasons(sts(5)))
    assertEquals(J.render(sts(4).get("reads").get), """[{"database":"shop","table":"a"},{"database":"shop","table":"b"}]""")
    assertEquals(J.render(sts(0).get("reads").get), """[{"database":"shop","table":"a"}]""")
    assertEquals(J.render(sts(0).get("writes").get), """[{"database":"base","table":"t"}]""")
  }

  test("an INSERT with a column list defines its target from the query's types; the event marks inferred tables") {
    val Seq(st) = sql("INSERT INTO shop.out (k, v) SELECT t.a, t.b FROM base.t t")
    assertEquals(str(st, "outcome"), "event", J.render(st))
    assertEquals(inferred(st), Seq("shop.out(k int, v string)"), J.render(st))
    val ev = J.render(st.get("events").get)
    assert(ev.contains(""""name":"out","provider":"json"""") && ev.contains(""""inferred":true"""), ev)
    val Seq(count) = sql("INSERT INTO base.t SELECT count(*), 'x' FROM shop.nothing_read")
    assertEquals(inferred(count), Seq("shop.nothing_read()"), J.render(count))
    assert(!J.render(count.get("events").get).contains(Inference.Placeholder), J.render(count))
  }

  test("a script's own tables and views feed its later statements; known tables are never changed") {
    val sts = sql(
      """CREATE TEMPORARY VIEW miss AS SELECT s.id FROM src_a s LEFT JOIN tgt_b t ON s.id = t.id WHERE t.id IS NULL;
        |CREATE TEMPORARY VIEW miss_count AS SELECT count(*) AS miss FROM miss;
        |CREATE TABLE base.accuracy USING parquet AS SELECT m.miss FROM miss_count m""".stripMargin)
    assertEquals(sts.map(str(_, "outcome")), Seq("event", "event", "event"), sts.map(J.render(_)).mkString("\n"))
    assert(J.render(sts(2).get("events").get).contains(""""name":"src_a""""), "the chain reads src_a")
    val Seq(known) = sql("INSERT INTO base.t SELECT t.a, t.nope FROM base.t t")
    assertEquals(str(known, "outcome"), "error", J.render(known))
    assertEquals(str(obj(known, "error").get, "errorClass"), "UNRESOLVED_COLUMN.WITH_SUGGESTION", J.render(known))
  }

  test("a type chosen by default is revised by a later use, and the script analyzed again with it") {
    // s.a is a string by default in the view; the INSERT writes it into base.t's int column
    val sts = sql(
      """CREATE TEMPORARY VIEW v AS SELECT s.a, s.note FROM shop.src s;
        |INSERT INTO base.t SELECT v.a, v.note FROM v""".stripMargin, Seq("spark.sql.storeAssignmentPolicy" -> "ANSI"))
    assertEquals(sts.map(str(_, "outcome")), Seq("event", "event"), sts.map(J.render(_)).mkString("\n"))
    assertEquals(inferred(sts(0)), Seq("shop.src(a int, note string)"), J.render(sts(0)))
    assertEquals(castsOnInferred(sts(1)), Nil, J.render(sts(1)))
  }

  test("UNPIVOT's value column is each column it unpivots: an INSERT of it types them all") {
    val Seq(st) = sql("INSERT INTO base.t SELECT v, n FROM shop.wide UNPIVOT (v FOR n IN (q1, q2))",
      Seq("spark.sql.storeAssignmentPolicy" -> "ANSI"))
    assertEquals(str(st, "outcome"), "event", J.render(st))
    assertEquals(inferred(st), Seq("shop.wide(q1 int, q2 int)"), J.render(st))
    assertEquals(castsOnInferred(st), Nil, J.render(st))
  }

  test("where Spark refuses columns of no type (a PIVOT's column), they are strings, and what Spark's coercion of them asks they become") {
    val Seq(st) = sql("CREATE TABLE base.pv USING parquet AS SELECT * FROM (SELECT id, kind, amount FROM shop.pv) " +
      "PIVOT (sum(amount) FOR kind IN ('buy' AS buy, 'sell' AS sell))")
    assertEquals(str(st, "outcome"), "event", J.render(st))
    assertEquals(inferred(st), Seq("shop.pv(id string, kind string, amount double)"), J.render(st))
    assertEquals(castsOnInferred(st), Nil, J.render(st))
    // into a described table: Spark refuses the string id written into an int (ANSI store
    // assignment) until the INSERT types it, and the query alone says what sum asks of amount
    val Seq(ins) = sql("INSERT INTO base.t SELECT * FROM (SELECT id, kind, amount FROM shop.pv) PIVOT (sum(amount) FOR kind IN ('buy' AS buy))",
      Seq("spark.sql.storeAssignmentPolicy" -> "ANSI"))
    assertEquals(str(ins, "outcome"), "event", J.render(ins))
    assertEquals(inferred(ins), Seq("shop.pv(id int, kind string, amount double)"), J.render(ins))
    assertEquals(castsOnInferred(ins), Nil, J.render(ins))
  }

  test("the outer references of a scalar subquery with no FROM are columns of the table around it") {
    // each round analyzes a plan of its own: Spark marks the rules that changed nothing in a node,
    // and a subquery analyzed before its columns were placed would not look for them again
    val Seq(st) = sql("CREATE TABLE base.sq USING parquet AS SELECT (SELECT x + y) AS s, z FROM shop.nofrom")
    assertEquals(str(st, "outcome"), "event", J.render(st))
    assertEquals(inferred(st).map(_.replaceAll(" [a-z]+(,|\\))", "$1")), Seq("shop.nofrom(x, y, z)"), J.render(st))
    // s is the subquery of x and y, the outer references to the inferred table's columns
    assert(named(st, "s").exists(e => e.contains("shop.nofrom.x") && e.contains("shop.nofrom.y")), named(st, "s").mkString(", "))
  }

  test("paths shape a column: an array's element, a map's value, a field of an element; inline's argument") {
    val Seq(st) = sql("CREATE TABLE base.n2 USING parquet AS SELECT p.items[0].sku, p.m['k'] AS mk, x.q FROM shop.p p " +
      "LATERAL VIEW inline(p.rows) x AS q, r")
    assertEquals(str(st, "outcome"), "event", J.render(st))
    assertEquals(inferred(st), Seq("shop.p(items array<struct<sku:string>>, m map<string,string>, rows array<struct<q:string,r:string>>)"), J.render(st))
  }
}
