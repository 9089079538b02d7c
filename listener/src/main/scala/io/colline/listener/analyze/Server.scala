package io.colline.listener.analyze

import java.io.{File, InputStream}
import java.net.InetSocketAddress
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}
import java.security.MessageDigest
import java.util.concurrent.Executors

import scala.util.Try
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.sun.net.httpserver.{HttpExchange, HttpServer}

import org.apache.spark.sql.SparkSession

import io.colline.listener.{Config, J, Versions}

/**
 * `colline analyze`'s JVM: one local Spark session that analyzes SQL and never runs it, behind a
 * small HTTP API on 127.0.0.1 (docs/analyze.md). Started by dev/spark-analyze:
 *
 * {{{
 *   Server [--host H] [--port N] [--work DIR] [--catalog memory|hive] [--metastore DIR|jdbc:…|thrift://…]
 *          [--warehouse DIR] [--ddl FILE]... [--token-file F] [--max-bytes N] [--parent-stdin]
 * }}}
 *
 * `GET /healthz` answers `{"status": "ok", …}`; `POST /v1/analyze` takes a JSON request
 * (`{"app", "namespace", "reads", "conf": {k: v}, "schema": [{"name", "sql"}], "files": [{"name", "sql"}]}`)
 * and answers, per file and statement, an event, a skip with its reason or an error with Spark's
 * message and position. With `--token-file` every request needs `Authorization: Bearer <token>`;
 * bodies above `--max-bytes` (default 8 MiB) are refused (413). On stdout, once ready:
 * `COLLINE_ANALYZE_READY http://host:port spark=<version> startupMs=<ms>`.
 */
object Server {
  private final case class Opts(
      host: String = "127.0.0.1",
      port: Int = 0,
      work: Option[String] = None,
      catalog: String = "memory",
      metastore: Option[String] = None,
      warehouse: Option[String] = None,
      ddl: Seq[String] = Nil,
      tokenFile: Option[String] = None,
      maxBytes: Int = 8 * 1024 * 1024,
      parentStdin: Boolean = false)

  private val Usage = "usage: Server [--host H] [--port N] [--work DIR] [--catalog memory|hive] " +
    "[--metastore DIR|jdbc:...|thrift://...] [--warehouse DIR] [--ddl FILE]... [--token-file F] [--max-bytes N] [--parent-stdin]"

  def main(args: Array[String]): Unit = {
    val opts = try parse(args.toList, Opts()) catch {
      case e: IllegalArgumentException => System.err.println("colline analyze: " + e.getMessage + "\n" + Usage); sys.exit(2)
    }
    if (opts.metastore.nonEmpty && opts.ddl.nonEmpty) {
      System.err.println("colline analyze: --ddl needs the analyzer's own catalog, not --metastore (which is never written to)")
      sys.exit(2)
    }
    val token = opts.tokenFile.map(f => new String(Files.readAllBytes(Paths.get(f)), StandardCharsets.UTF_8).trim)
    if (token.exists(_.isEmpty)) { System.err.println("colline analyze: the token file is empty"); sys.exit(2) }
    val work = new File(opts.work.getOrElse(Files.createTempDirectory("colline-analyze").toString)).getAbsoluteFile
    work.mkdirs()

    val spark = session(opts, work)
    val analyzer = new Analyzer(spark, ownCatalog = opts.metastore.isEmpty, Config.Defaults)
    opts.ddl.foreach { f =>
      val text = new String(Files.readAllBytes(Paths.get(f)), StandardCharsets.UTF_8)
      val failed = analyzer.load(Seq(Part(f, text))).items.flatMap {
        case o: J.Obj => o.get("statements").toSeq.flatMap { case a: J.Arr => a.items; case _ => Nil }
        case _ => Nil
      }.collect { case s: J.Obj if s.get("outcome").contains(J.Str("error")) => J.render(s) }
      failed.foreach(s => System.err.println(s"colline analyze: $f: a schema statement failed: $s"))
    }

    val server = HttpServer.create(new InetSocketAddress(opts.host, opts.port), 16)
    server.setExecutor(Executors.newFixedThreadPool(2))
    server.createContext("/healthz", ex => guard(ex, token, opts.maxBytes, "GET") { _ =>
      J.obj("status" -> J.Str("ok"), "spark" -> J.Str(Versions.spark), "scala" -> J.Str(Versions.scalaBinary),
        "listener" -> J.Str(Versions.listener), "catalog" -> J.Str(if (analyzer.ownCatalog) opts.catalog else "metastore"))
    })
    server.createContext("/v1/analyze", ex => guard(ex, token, opts.maxBytes, "POST") { body =>
      analyzer.run(request(body))
    })
    server.start()
    val startup = System.currentTimeMillis() - java.lang.management.ManagementFactory.getRuntimeMXBean.getStartTime
    println(s"COLLINE_ANALYZE_READY http://${opts.host}:${server.getAddress.getPort} spark=${Versions.spark} startupMs=$startup")
    System.out.flush()

    val stop = () => { Try(server.stop(0)); Try(spark.stop()) }
    Runtime.getRuntime.addShutdownHook(new Thread(() => stop()))
    if (opts.parentStdin) { // the parent's end of our stdin closes when it exits, however it exits
      while (System.in.read() >= 0) {}
      sys.exit(0)
    }
  }

  private def parse(args: List[String], o: Opts): Opts = args match {
    case Nil => o
    case "--host" :: v :: rest => parse(rest, o.copy(host = v))
    case "--port" :: v :: rest => parse(rest, o.copy(port = Try(v.toInt).filter(p => p >= 0 && p < 65536)
      .getOrElse(throw new IllegalArgumentException(s"--port $v: want 0 to 65535"))))
    case "--work" :: v :: rest => parse(rest, o.copy(work = Some(v)))
    case "--catalog" :: v :: rest if v == "memory" || v == "hive" => parse(rest, o.copy(catalog = v))
    case "--catalog" :: v :: _ => throw new IllegalArgumentException(s"--catalog $v: want memory or hive")
    case "--metastore" :: v :: rest => parse(rest, o.copy(metastore = Some(v)))
    case "--warehouse" :: v :: rest => parse(rest, o.copy(warehouse = Some(v)))
    case "--ddl" :: v :: rest =>
      if (!new File(v).isFile) throw new IllegalArgumentException(s"--ddl $v: no such file")
      parse(rest, o.copy(ddl = o.ddl :+ v))
    case "--token-file" :: v :: rest => parse(rest, o.copy(tokenFile = Some(v)))
    case "--max-bytes" :: v :: rest => parse(rest, o.copy(maxBytes = Try(v.toInt).filter(_ > 0)
      .getOrElse(throw new IllegalArgumentException(s"--max-bytes $v: want a positive number of bytes"))))
    case "--parent-stdin" :: rest => parse(rest, o.copy(parentStdin = true))
    case x :: _ => throw new IllegalArgumentException(s"unknown or incomplete argument $x")
  }

  /**
   * The session: the analyzer's own catalog (in memory, or a Hive metastore in Derby under the
   * work directory), or a user's metastore, which it only reads. Nothing runs, so one core does.
   */
  private def session(o: Opts, work: File): SparkSession = {
    System.setProperty("derby.system.home", new File(work, "derby").toString)
    System.setProperty("derby.stream.error.file", new File(work, "derby.log").toString)
    val b = SparkSession.builder()
      .master("local[1]")
      .appName("colline-analyze")
      .config("spark.ui.enabled", "false")
      .config("spark.driver.host", "127.0.0.1")
      .config("spark.driver.bindAddress", "127.0.0.1")
      .config("spark.hadoop.hive.exec.scratchdir", new File(work, "hive-scratch").toString)
      .config("spark.hadoop.hive.exec.local.scratchdir", new File(work, "hive-local").toString)
      .config("spark.hadoop.hive.metastore.schema.verification", "false")
    val warehouse = (o.warehouse, o.metastore) match {
      case (Some(w), _) => new File(w).getAbsoluteFile.toURI.toString
      case (None, Some(m)) if new File(m, "warehouse").isDirectory => new File(m, "warehouse").getAbsoluteFile.toURI.toString
      case _ => new File(work, "warehouse").toURI.toString
    }
    b.config("spark.sql.warehouse.dir", warehouse)
      .config("spark.hadoop.hive.metastore.warehouse.dir", warehouse)
    o.metastore match {
      case Some(m) =>
        b.config("spark.sql.catalogImplementation", "hive")
          .config("spark.hadoop.datanucleus.schema.autoCreateAll", "false")
        if (m.startsWith("thrift://")) b.config("spark.hadoop.hive.metastore.uris", m)
        else {
          val url =
            if (m.startsWith("jdbc:")) m
            else {
              val dir = Seq(new File(m, "metastore_db"), new File(m)).find(d => new File(d, "service.properties").isFile)
                .getOrElse(throw new IllegalArgumentException(s"--metastore $m: no Derby metastore (metastore_db) there"))
              "jdbc:derby:;databaseName=" + dir.getAbsolutePath // no create=true: an existing metastore only
            }
          b.config("spark.hadoop.javax.jdo.option.ConnectionURL", url)
        }
      case None if o.catalog == "hive" =>
        b.config("spark.sql.catalogImplementation", "hive")
          .config("spark.hadoop.javax.jdo.option.ConnectionURL",
            "jdbc:derby:;databaseName=" + new File(work, "metastore_db").getAbsolutePath + ";create=true")
          .config("spark.hadoop.datanucleus.schema.autoCreateAll", "true")
      case None => b.config("spark.sql.catalogImplementation", "in-memory")
    }
    // spark.* system properties (dev/spark-analyze -D…) reach the session through SparkConf
    val s = b.getOrCreate()
    s.sessionState.catalog.listDatabases() // open the catalog now, not in the first request
    s
  }

  private val mapper = new ObjectMapper()

  private def request(body: Array[Byte]): Request = {
    val n: JsonNode = try mapper.readTree(body) catch {
      case NonFatal(e) => throw new BadRequest("the body is not JSON: " + String.valueOf(e.getMessage).split("\n")(0))
    }
    if (n == null || !n.isObject) throw new BadRequest("the body must be a JSON object")
    def text(k: String, d: String): String = Option(n.get(k)).filterNot(_.isNull).map { v =>
      if (!v.isTextual) throw new BadRequest(s"$k: want a string"); v.asText()
    }.getOrElse(d)
    def parts(k: String): Seq[Part] = Option(n.get(k)).filterNot(_.isNull).map { a =>
      if (!a.isArray) throw new BadRequest(s"$k: want an array of {name, sql}")
      (0 until a.size()).map(a.get).zipWithIndex.map { case (p, i) =>
        val name = Option(p.get("name")).filter(_.isTextual).map(_.asText()).getOrElse(s"$k[$i]")
        val sql = Option(p.get("sql")).filter(_.isTextual).map(_.asText())
          .getOrElse(throw new BadRequest(s"$k[$i].sql: want a string"))
        Part(name, sql)
      }.toSeq
    }.getOrElse(Nil)
    val conf = Option(n.get("conf")).filterNot(_.isNull).map { c =>
      if (!c.isObject) throw new BadRequest("conf: want an object of strings")
      val it = c.fields()
      val kv = Seq.newBuilder[(String, String)]
      while (it.hasNext) {
        val e = it.next()
        if (!e.getValue.isTextual) throw new BadRequest(s"conf.${e.getKey}: want a string")
        kv += e.getKey -> e.getValue.asText()
      }
      kv.result()
    }.getOrElse(Nil)
    val reads = Option(n.get("reads")).filterNot(_.isNull).map { v =>
      if (!v.isBoolean) throw new BadRequest("reads: want true or false"); v.asBoolean()
    }.getOrElse(false)
    Request(app = text("app", "colline-analyze"), namespace = text("namespace", "default"), reads = reads,
      conf = conf, schema = parts("schema"), files = parts("files"))
  }

  private final class BadRequest(msg: String) extends RuntimeException(msg)
  private final class Status(val code: Int, msg: String) extends RuntimeException(msg)

  /** Method, auth and size checks, then f; every answer is JSON, every failure a status with a message. */
  private def guard(ex: HttpExchange, token: Option[String], maxBytes: Int, method: String)(f: Array[Byte] => J.Obj): Unit = {
    val (code, body) = try {
      if (ex.getRequestMethod != method) throw new Status(405, s"use $method")
      token.foreach { t =>
        val got = Option(ex.getRequestHeaders.getFirst("Authorization")).getOrElse("")
        if (!MessageDigest.isEqual(got.getBytes(StandardCharsets.UTF_8), ("Bearer " + t).getBytes(StandardCharsets.UTF_8)))
          throw new Status(401, "missing or wrong bearer token")
      }
      (200, f(read(ex.getRequestBody, maxBytes)))
    } catch {
      case s: Status => (s.code, J.obj("error" -> J.Str(s.getMessage)))
      case b: BadRequest => (400, J.obj("error" -> J.Str(b.getMessage)))
      case e: IllegalArgumentException => (400, J.obj("error" -> J.Str(e.getMessage)))
      case t: Throwable => (500, J.obj("error" -> J.Str(t.getClass.getName + ": " + String.valueOf(t.getMessage))))
    }
    try {
      val bytes = J.toBytes(body)
      ex.getResponseHeaders.set("Content-Type", "application/json")
      ex.sendResponseHeaders(code, bytes.length.toLong)
      ex.getResponseBody.write(bytes)
    } catch { case NonFatal(_) => } finally ex.close()
  }

  private def read(in: InputStream, max: Int): Array[Byte] = {
    val out = new java.io.ByteArrayOutputStream()
    val buf = new Array[Byte](65536)
    var n = in.read(buf)
    while (n >= 0) {
      if (out.size() + n > max) throw new Status(413, s"the body is larger than $max bytes (--max-bytes)")
      out.write(buf, 0, n)
      n = in.read(buf)
    }
    out.toByteArray
  }
}
