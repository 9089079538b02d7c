package io.colline.listener.analyze

import java.io.File
import java.nio.charset.StandardCharsets
import java.nio.file.Files
import java.util.concurrent.{Callable, Executors, TimeUnit}

import scala.concurrent.duration.Duration

import io.colline.listener.J

/** The analyzer's promises on a real local Spark: nothing deleted, read or kept between requests. */
class AnalyzerTest extends munit.FunSuite {
  import TestAnalyzer._

  override val munitTimeout: Duration = Duration(10, "min")

  private lazy val scratch = Files.createTempDirectory("colline-analyzer-test").toFile

  private def victimDir(): File = {
    val d = Files.createTempDirectory(scratch.toPath, "victim").toFile
    Files.write(new File(d, "precious.txt").toPath, "precious".getBytes(StandardCharsets.UTF_8))
    new File(d, "sub").mkdirs()
    Files.write(new File(d, "sub/more.txt").toPath, "more".getBytes(StandardCharsets.UTF_8))
    d
  }

  private def sql(text: String, reads: Boolean = false): Seq[J.Obj] =
    statements(files(TestAnalyzer.run(Request(reads = reads, files = Seq(Part("t.sql", text))))).head)

  test("a database at a user's LOCATION, a table in it, dropped with CASCADE: nothing outside the work directory is deleted") {
    val victim = victimDir()
    val before = tree(victim)
    val sts = sql(s"CREATE DATABASE vdb LOCATION '$victim'; CREATE TABLE vdb.t (a INT) USING parquet; " +
      s"INSERT INTO vdb.t SELECT 1; DROP TABLE vdb.t; CREATE TABLE vdb.t2 (a INT) USING parquet LOCATION '$victim/sub'; " +
      "DROP DATABASE vdb CASCADE")
    assertEquals(sts.map(s => bool(s, "applied")), Seq(Some(true), Some(true), None, Some(true), Some(true), Some(true)), sts.map(J.render(_)).mkString("\n"))
    assert(str(sts.head, "note").contains(s"""LOCATION "$victim" is not used"""), str(sts.head, "note"))
    // and when the request's end removes them
    sql(s"CREATE DATABASE vdb LOCATION '$victim'; CREATE TABLE vdb.t (a INT) USING parquet LOCATION '$victim'")
    assertEquals(tree(victim), before)
    assert(!root.list().contains("vdb.db"), "the request's database is left")
  }

  test("a temporary view over a file and a CTAS from it: refused, no file content in the answer") {
    val secret = new File(scratch, "secret.csv")
    Files.write(secret.toPath, "colline_secret_column,other\n1,2\n".getBytes(StandardCharsets.UTF_8))
    val res = TestAnalyzer.run(Request(files = Seq(Part("leak.sql",
      s"""CREATE TEMPORARY VIEW v USING csv OPTIONS(path "$secret", header "true");
         |CREATE TABLE default.leak2 USING parquet AS SELECT * FROM v;
         |SELECT * FROM csv.`$secret`""".stripMargin))))
    val sts = statements(files(res).head)
    assertEquals(sts.map(s => str(s, "outcome")), Seq("refused", "error", "refused"), J.render(res))
    assert(!J.render(res).contains("colline_secret_column"), J.render(res))
  }

  test("CREATE TABLE without USING on the memory catalog: a data source table, as on Spark 4, its CTAS an event") {
    val sts = sql("CREATE TABLE base.plain (a INT, b STRING); CREATE TABLE base.plain_ctas AS SELECT a, upper(b) AS b FROM base.t")
    assert(sts.size == 2 && sts.forall(s => str(s, "outcome") != "error"), sts.map(J.render(_)).mkString("\n"))
    assertEquals(bool(sts.head, "applied"), Some(true), J.render(sts.head))
    assertEquals(str(sts(1), "outcome"), "event", J.render(sts(1)))
  }

  test("with a metastore, the tables and views a script creates feed its later statements as it declares them; the metastore is not written") {
    val catalog = spark.sessionState.catalog
    val before = (catalog.listTables("base").map(_.unquotedString).sorted, tree(root))
    val res = TestAnalyzer.run(Request(reads = true, infer = true, files = Seq(Part("m.sql",
      """CREATE TABLE base.made (k INT, v STRING) USING parquet;
        |INSERT INTO base.made SELECT a, b FROM base.t;
        |CREATE TABLE base.made2 USING parquet AS SELECT m.k FROM base.made m;
        |CREATE VIEW base.mv AS SELECT k FROM base.made2;
        |INSERT INTO base.t SELECT v.k, 'x' FROM base.mv v;
        |CREATE TABLE base.t (z INT) USING parquet;
        |DROP TABLE base.made;
        |INSERT INTO base.made SELECT 1, 'y'""".stripMargin))), on = readOnly)
    val sts = statements(files(res).head)
    val all = sts.map(J.render(_)).mkString("\n")
    assertEquals(sts.map(s => str(s, "outcome")), Seq("skipped", "event", "event", "event", "event", "skipped", "event", "tableLevel"), all)
    assertEquals(sts.map(s => bool(s, "applied")), Seq(Some(true), None, Some(true), Some(true), None, Some(false), Some(true), None), all)
    assertEquals(str(sts.head, "note"), Registrar.KeptNote)
    // described by the script, not inferred: each table's schema comes from where the answer says
    def sources(st: J.Obj) = st.get("tables").collect { case a: J.Arr => a.items.collect { case o: J.Obj => s"${str(o, "table")} ${str(o, "source")}" }.toSeq }
    assertEquals(sources(sts(1)), Some(Seq("made script", "t metastore")), all)
    assertEquals(sources(sts(4)), Some(Seq("t metastore", "mv script")), all)
    assert(sts.forall(_.get("inferred").isEmpty), all)
    // the columns it declares: k and v of made, written from a and b; mv reads made2, which reads made
    val insert = J.render(sts(1).get("events").get)
    assert(insert.contains(""""name":"made"""") && insert.contains(""""name":"k","type":"int""""), insert)
    assert(J.render(sts(4).get("events").get).contains(""""name":"made2""""), J.render(sts(4)))
    assert(str(sts(5), "notApplied").contains("base.t already exists"), J.render(sts(5)))
    // dropped, it is a table nobody described again
    assert(str(sts(7), "reason").contains("INSERT INTO base.made, which nobody described"), J.render(sts(7)))
    assertEquals((catalog.listTables("base").map(_.unquotedString).sorted, tree(root)), before)
    // the empty directories of the script's tables (Spark lists a table's files) are gone with the request
    assertEquals(Option(new File(work, "spark-local").list()).toSeq.flatten.filter(_.startsWith("colline-script-tables-")), Nil)
  }

  test("one request's session and catalog entries are invisible to the next") {
    val first = sql("CREATE DATABASE iso; CREATE TABLE iso.t (a INT) USING parquet; CREATE TEMPORARY VIEW iv AS SELECT 1 AS a; " +
      "CREATE GLOBAL TEMPORARY VIEW igv AS SELECT 1 AS a; SET spark.sql.caseSensitive = true; USE base; " +
      "CREATE TABLE base.mine (a INT) USING parquet")
    assert(first.forall(s => bool(s, "applied").contains(true)), first.map(J.render(_)).mkString("\n"))
    val next = sql("SELECT * FROM iso.t; SELECT * FROM iv; SELECT * FROM global_temp.igv; SELECT * FROM base.mine; " +
      "SELECT a FROM t; SELECT A FROM base.t", reads = true)
    assertEquals(next.map(s => str(s, "outcome")), Seq("error", "error", "error", "error", "error", "event"), next.map(J.render(_)).mkString("\n"))
    next.take(5).foreach(s => assert(str(obj(s, "error").get, "errorClass") == "TABLE_OR_VIEW_NOT_FOUND", J.render(s)))
  }

  test("concurrent requests each see their own definitions") {
    val pool = Executors.newFixedThreadPool(4)
    try {
      val results = (1 to 4).map { n =>
        pool.submit(new Callable[Seq[String]] {
          def call(): Seq[String] = (1 to 3).map { round =>
            val res = TestAnalyzer.run(Request(files = Seq(Part("c.sql",
              s"CREATE DATABASE c; CREATE TABLE c.t (col_$n INT) USING parquet; CREATE TEMPORARY VIEW cv AS SELECT col_$n AS x FROM c.t; " +
                "CREATE TABLE c.out USING parquet AS SELECT x FROM cv"))))
            val last = statements(files(res).head).last
            val events = J.render(last.get("events").getOrElse(J.Null))
            if (str(last, "outcome") != "event") s"thread $n round $round: ${J.render(last)}"
            else if (!events.contains(s"col_$n") || (1 to 4).exists(m => m != n && events.contains(s"col_$m"))) s"thread $n round $round saw $events"
            else ""
          }
        })
      }
      val problems = results.flatMap(_.get(5, TimeUnit.MINUTES)).filter(_.nonEmpty)
      assert(problems.isEmpty, problems.mkString("\n"))
    } finally pool.shutdown()
  }

  test("a statement whose analysis would not end stops at the request's deadline") {
    // each view joins the one before with itself: analyzing the next doubles the plan
    val views = "CREATE TEMPORARY VIEW v0 AS SELECT a, b FROM base.t;\n" + (1 to 40).map(i =>
      s"CREATE TEMPORARY VIEW v$i AS SELECT x.a, y.b FROM v${i - 1} x JOIN v${i - 1} y ON x.a = y.a").mkString(";\n")
    val start = System.nanoTime()
    intercept[DeadlineExceeded](TestAnalyzer.run(Request(files = Seq(Part("slow.sql", views))), deadlineSeconds = 3))
    val took = (System.nanoTime() - start) / 1e9
    println(f"AnalyzerTest: a 3 s deadline stopped the analysis after $took%.1f s")
    assert(took < 20, s"stopped after $took s")
    assertEquals(sql("SELECT * FROM v1", reads = true).map(s => str(s, "outcome")), Seq("error"))
  }

  test("tables as data: a hostile type is refused with its column named and creates nothing") {
    val victim = victimDir()
    val before = tree(victim)
    val hostile = s"int) USING parquet; CREATE DATABASE p LOCATION '$victim'; CREATE TABLE p.z (a int"
    val res = TestAnalyzer.run(Request(
      tables = Seq(
        TableSpec("shop.orders", Seq(ColumnSpec("id", "bigint"), ColumnSpec("amount", hostile)), source = "graph"),
        TableSpec("shop.people", Seq(ColumnSpec("id", "bigint"), ColumnSpec("name", "varchar(10)"), ColumnSpec("tags", "array<struct<a:int>>"),
          ColumnSpec("day", "date")), partitionColumns = Seq("day"), source = "graph"),
        TableSpec("`odd.db`.`a b`", Seq(ColumnSpec("x", "int")))),
      files = Seq(Part("q.sql", "CREATE TABLE shop.out USING parquet AS SELECT id, name, day FROM shop.people; " +
        "INSERT INTO shop.orders SELECT 1, 2; SELECT * FROM `odd.db`.`a b`"))))
    val defined = res.get("tables").collect { case a: J.Arr => a.items.collect { case o: J.Obj => o } }.get
    assertEquals(defined.map(t => str(t, "outcome")).toSeq, Seq("refused", "applied", "refused"), J.render(res))
    assert(str(defined.head, "reason").startsWith("column \"amount\": type \"int) USING parquet;"), str(defined.head, "reason"))
    assert(str(defined(2), "reason").contains("letters, digits and _"), str(defined(2), "reason"))
    val sts = statements(files(res).head)
    assertEquals(sts.map(s => str(s, "outcome")), Seq("event", "error", "error"), J.render(res))
    assert(J.render(sts.head).contains(""""namespace":["shop"],"name":"people""""), J.render(sts.head))
    assertEquals(tree(victim), before)
    assertEquals(root.list().toSeq.sorted, Seq("base.db"))
  }

  test("a table's type is one Spark SQL type and nothing else") {
    assert(Tables.dataType("decimal(10,2)").isRight)
    assert(Tables.dataType("map<string,array<struct<`a b`:int>>>").isRight)
    for (bad <- Seq("", "int) USING parquet", "a int, b int", "int; DROP DATABASE x", "no_such_type", "int COMMENT 'x'"))
      assert(Tables.dataType(bad).isLeft, s"$bad was taken for a type")
  }

  test("a request may change its own settings, not the locked or dangerous ones") {
    intercept[IllegalArgumentException](TestAnalyzer.run(Request(conf = Seq("spark.sql.runSQLOnFiles" -> "true"))))
    intercept[IllegalArgumentException](TestAnalyzer.run(Request(conf = Seq("spark.sql.catalog.x" -> "org.example.X"))))
    intercept[IllegalArgumentException](TestAnalyzer.run(Request(conf = Seq("fs.defaultFS" -> "hdfs://127.0.0.1:9"))))
    val ok = TestAnalyzer.run(Request(conf = Seq("spark.sql.ansi.enabled" -> "false"), reads = true,
      files = Seq(Part("s.sql", "SET spark.sql.runSQLOnFiles = true; SELECT * FROM base.t"))))
    val sts = statements(files(ok).head)
    assertEquals(bool(sts.head, "applied"), Some(false))
    assertEquals(str(sts(1), "outcome"), "event")
  }

  override def afterAll(): Unit = {
    def rm(f: File): Unit = { Option(f.listFiles()).foreach(_.foreach(rm)); f.delete() }
    rm(scratch)
  }
}
