package io.colline.listener.analyze

import java.io.File
import java.net.ServerSocket
import java.nio.charset.StandardCharsets
import java.nio.file.Files
import java.util.concurrent.atomic.AtomicInteger

import scala.concurrent.duration.Duration
import scala.io.Source
import scala.util.Try

import org.antlr.v4.runtime.{CharStream, CharStreams, CommonTokenStream}
import org.antlr.v4.runtime.misc.Interval
import org.antlr.v4.runtime.tree.ParseTree

import org.apache.spark.sql.catalyst.parser.{SqlBaseLexer, SqlBaseParser}

import io.colline.listener.{J, Versions}

/**
 * Every statement kind Spark's parser accepts, on the Spark line the tests run with (3.5 in
 * `make listener`, 4.1 in its second build), against its expected outcome
 * (resources/analyze/statement-kinds.tsv): the kinds come from Spark's own generated parser (its
 * statement alternatives), each sample is checked to be of its kind by that parser, then sent
 * through the analyzer. A kind Spark adds fails this test until it has a sample and an outcome.
 */
class AllowlistTest extends munit.FunSuite {
  import TestAnalyzer._

  override val munitTimeout: Duration = Duration(10, "min")

  private final case class Sample(kind: String, outcome: String, fragment: String, sql: String)

  // what nothing may touch: a file, a directory with a file, a listener counting connections
  private lazy val scratch = Files.createTempDirectory("colline-allowlist").toFile
  // a named pipe: whoever opens it to read lets the writer below through, and is counted
  private val opened = new AtomicInteger
  @volatile private var closing = false
  private lazy val secret = {
    val f = new File(scratch, "secret.csv")
    assertEquals(new ProcessBuilder("mkfifo", f.getPath).inheritIO().start().waitFor(), 0)
    val t = new Thread(() => Try {
      val out = new java.io.FileOutputStream(f) // blocks until a reader opens the pipe
      if (!closing) opened.incrementAndGet()
      out.write("colline_secret_header,b\n1,2\n".getBytes(StandardCharsets.UTF_8))
      out.close()
    })
    t.setDaemon(true)
    t.start()
    f
  }
  private lazy val victim = {
    val d = new File(scratch, "victim")
    d.mkdirs()
    Files.write(new File(d, "keep.txt").toPath, "keep".getBytes(StandardCharsets.UTF_8))
    d
  }
  private val connections = new AtomicInteger
  private lazy val listener = {
    val s = new ServerSocket(0, 50, java.net.InetAddress.getByName("127.0.0.1"))
    val t = new Thread(() => while (!s.isClosed) Try { val c = s.accept(); connections.incrementAndGet(); c.close() })
    t.setDaemon(true)
    t.start()
    s
  }

  private lazy val samples: Seq[Sample] = {
    val in = getClass.getResourceAsStream("/analyze/statement-kinds.tsv")
    val lines = try Source.fromInputStream(in, "UTF-8").getLines().toList finally in.close()
    lines.filterNot(l => l.trim.isEmpty || l.startsWith("#")).map { l =>
      val f = l.split("\t", 4)
      assert(f.length == 4, s"statement-kinds.tsv: want 4 tab-separated columns: $l")
      def sub(s: String) = s.replace("${secret}", secret.getPath).replace("${victim}", victim.getPath)
        .replace("${remote}", s"http://127.0.0.1:${listener.getLocalPort}/x.jar")
        .replace("${hdfs}", s"hdfs://127.0.0.1:${listener.getLocalPort}/x")
      Sample(f(0), f(1), sub(f(2)), sub(f(3)))
    }
  }

  /** The statement kinds of the running Spark's grammar: its generated parser's alternatives. */
  private lazy val parserKinds: Set[String] = {
    val rules = Set("StatementContext", "SetResetStatementContext", "DmlStatementNoWithContext")
    classOf[SqlBaseParser].getDeclaredClasses.toSeq
      .filter(c => c.getSuperclass != null && rules(c.getSuperclass.getSimpleName))
      .map(_.getSimpleName.stripSuffix("Context"))
      .filterNot(_ == "DmlStatement") // a wrapper: its kinds are dmlStatementNoWith's
      .toSet
  }

  /** The kind Spark's parser reads a statement as: the first statement alternative in its parse tree. */
  private def kindOf(sql: String): Option[String] = {
    val parser = new SqlBaseParser(new CommonTokenStream(new SqlBaseLexer(new UpperCase(CharStreams.fromString(sql)))))
    parser.removeErrorListeners()
    val tree: ParseTree = parser.singleStatement()
    def find(t: ParseTree): Option[String] = {
      val name = t.getClass.getSimpleName.stripSuffix("Context")
      if (parserKinds(name)) Some(name)
      else (0 until t.getChildCount).iterator.map(i => find(t.getChild(i))).collectFirst { case Some(k) => k }
    }
    find(tree)
  }

  private val preamble = "CREATE DATABASE d; CREATE TABLE d.t (a INT, b STRING) USING parquet; " +
    "CREATE TABLE d.p (a INT, b STRING) USING parquet PARTITIONED BY (b); CREATE VIEW d.v AS SELECT a FROM d.t; " +
    "CREATE TEMPORARY VIEW tv AS SELECT a FROM d.t"

  /** What became of a statement, in the words of statement-kinds.tsv, and the text that says why. */
  private def outcome(r: J.Obj): (String, String) = str(r, "outcome") match {
    case "refused" => ("refused", str(r, "reason"))
    case "error" =>
      val e = obj(r, "error").get
      (if (str(e, "stage") == "parse") "parse" else "error", str(e, "message"))
    case _ => bool(r, "applied") match {
      case Some(true) => ("registered", str(r, "note"))
      case Some(false) => ("unapplied", str(r, "notApplied"))
      case None => ("analyzed", str(r, "reason"))
    }
  }

  test("every statement kind of Spark's grammar has a sample and its outcome") {
    val missing = parserKinds -- samples.map(_.kind)
    assert(missing.isEmpty, s"Spark ${Versions.spark}'s parser has statement kinds statement-kinds.tsv lacks: ${missing.toSeq.sorted.mkString(", ")}")
    val extra = samples.map(_.kind).toSet -- parserKinds
    println(s"AllowlistTest: Spark ${Versions.spark}: ${parserKinds.size} statement kinds; " +
      s"${extra.size} kinds of other Spark lines skipped (${extra.toSeq.sorted.mkString(", ")})")
  }

  test("each sample is of its kind and has its outcome; nothing read, changed or fetched") {
    val victimBefore = tree(victim)
    val answers = new StringBuilder
    val failures = Seq.newBuilder[String]
    val counts = scala.collection.mutable.Map.empty[String, Int].withDefaultValue(0)
    val run = samples.filter(s => parserKinds(s.kind))
    run.foreach { s =>
      kindOf(s.sql) match {
        case Some(k) if k == s.kind =>
        case other => failures += s"${s.kind}: Spark's parser reads `${s.sql}` as ${other.getOrElse("nothing")}"
      }
      val res = TestAnalyzer.run(Request(files = Seq(Part("sample.sql", preamble + ";\n" + s.sql))))
      answers.append(J.render(res))
      val sts = statements(files(res).head)
      sts.init.filter(st => !bool(st, "applied").contains(true)).foreach(st =>
        failures += s"${s.kind}: the preamble's `${str(st, "text")}` was not registered: ${J.render(st)}")
      val (got, why) = outcome(sts.last)
      counts(got) += 1
      if (got != s.outcome || (s.fragment != "-" && !why.contains(s.fragment)))
        failures += s"${s.kind}: `${s.sql}`: $got ($why), want ${s.outcome}" + (if (s.fragment != "-") s" (${s.fragment})" else "")
    }
    val f = failures.result()
    println(s"AllowlistTest: Spark ${Versions.spark}: ${run.size} samples: " + counts.toSeq.sorted.map { case (k, n) => s"$k $n" }.mkString(", "))
    assert(f.isEmpty, f.mkString("\n"))
    assertEquals(tree(victim), victimBefore, s"something changed in $victim")
    assert(!answers.toString.contains("colline_secret_header"), "an answer holds the secret file's content")
    assertEquals(connections.get, 0, s"the analyzer connected to the test's listener (${listener.getLocalPort})")
    assertEquals(opened.get, 0, s"the analyzer opened $secret")
  }

  test("nothing a request defined is left in the catalog") {
    TestAnalyzer.run(Request(files = Seq(Part("x.sql", preamble + "; CREATE GLOBAL TEMPORARY VIEW gv AS SELECT 1 AS a"))))
    val res = TestAnalyzer.run(Request(reads = true, files = Seq(Part("y.sql",
      "SHOW DATABASES; SELECT * FROM d.t; SELECT * FROM tv; SELECT * FROM global_temp.gv"))))
    val sts = statements(files(res).head)
    assertEquals(sts.drop(1).map(st => str(st, "outcome")), Seq("error", "error", "error"), J.render(res))
    assertEquals(root.list().toSeq.sorted, Seq("base.db"), s"left in ${root}")
  }

  test("a SQL script is refused before Spark's analyzer runs its statements") {
    TestAnalyzer.analyzer
    val spark = org.apache.spark.sql.SparkSession.active
    Try(spark.sessionState.sqlParser.parsePlan("BEGIN END")).toOption.foreach { p =>
      // Spark 4 parses a script into a CompoundBody; Spark 3 has no scripts
      assert(Allowlist.beforeAnalysis(p).exists(_.contains("script")), s"${p.getClass}: ${Allowlist.beforeAnalysis(p)}")
    }
  }

  override def afterAll(): Unit = {
    closing = true
    Try(listener.close())
    Try(new java.io.FileInputStream(secret).close()) // lets the pipe's writer end
  }
}

/** Spark's parser reads keywords upper case (Spark 3's ParseDriver does the same; Spark 4's grammar is case insensitive). */
private final class UpperCase(in: CharStream) extends CharStream {
  override def getText(interval: Interval): String = in.getText(interval)
  override def consume(): Unit = in.consume()
  override def LA(i: Int): Int = { val c = in.LA(i); if (c <= 0) c else Character.toUpperCase(c) }
  override def mark(): Int = in.mark()
  override def release(marker: Int): Unit = in.release(marker)
  override def index(): Int = in.index()
  override def seek(index: Int): Unit = in.seek(index)
  override def size(): Int = in.size()
  override def getSourceName: String = in.getSourceName
}
