package io.colline.listener.analyze

import java.io.File
import java.nio.file.Files

import org.apache.spark.sql.SparkSession

import io.colline.listener.{Config, J}

/**
 * One analyzer for the tests of the package: a real local Spark session (Spark's own parser and
 * analyzer, the memory catalog), its work directory a temporary one, and a baseline as `--ddl`
 * loads it (database base, table base.t).
 */
object TestAnalyzer {
  lazy val work: File = Files.createTempDirectory("colline-analyze-test").toFile.getCanonicalFile
  lazy val root: File = new File(work, "warehouse").getCanonicalFile
  lazy val spark: SparkSession = Server.session(work, "memory", None, None)
  lazy val analyzer: Analyzer = {
    val a = new Analyzer(spark, Config.Defaults, Some(root))
    val loaded = a.load(Seq(Part("base.sql", "CREATE DATABASE base; CREATE TABLE base.t (a INT, b STRING) USING parquet")))
    require(statements(loaded.items.head.asInstanceOf[J.Obj]).forall(s => str(s, "outcome") == "applied"), J.render(loaded))
    a
  }

  /** The same catalog (base.t) as a user's metastore is to an analyzer: read, never written. */
  lazy val readOnly: Analyzer = { analyzer; new Analyzer(spark, Config.Defaults, None) }

  def run(req: Request, deadlineSeconds: Long = 120, on: => Analyzer = analyzer): J.Obj = Deadline.within(deadlineSeconds)(on.run(req))

  /** The statements of the answer's only file. */
  def files(res: J.Obj): Seq[J.Obj] = res.get("files").collect { case a: J.Arr => a.items.collect { case o: J.Obj => o }.toSeq }.getOrElse(Nil)
  def statements(file: J.Obj): Seq[J.Obj] = file.get("statements").collect { case a: J.Arr => a.items.collect { case o: J.Obj => o }.toSeq }.getOrElse(Nil)
  def str(o: J.Obj, k: String): String = o.get(k).collect { case J.Str(s) => s }.getOrElse("")
  def obj(o: J.Obj, k: String): Option[J.Obj] = o.get(k).collect { case x: J.Obj => x }
  def bool(o: J.Obj, k: String): Option[Boolean] = o.get(k).collect { case J.Bool(b) => b }

  /** Every file and directory below dir, with its size and modification time. */
  def tree(dir: File): Seq[String] =
    if (!dir.exists()) Nil
    else {
      val b = Seq.newBuilder[String]
      def walk(f: File): Unit = {
        b += s"${dir.toPath.relativize(f.toPath)} ${f.length()} ${f.lastModified()}"
        Option(f.listFiles()).foreach(_.sortBy(_.getName).foreach(walk))
      }
      walk(dir)
      b.result()
    }
}
