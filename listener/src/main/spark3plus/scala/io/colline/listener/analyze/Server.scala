package io.colline.listener.analyze

import java.io.{File, InputStream}
import java.net.InetSocketAddress
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}
import java.nio.file.attribute.PosixFilePermissions
import java.security.SecureRandom
import java.util.concurrent.{ArrayBlockingQueue, ExecutionException, Executors, FutureTask, RejectedExecutionException, ThreadFactory, ThreadPoolExecutor, TimeUnit, TimeoutException}
import java.util.concurrent.atomic.AtomicInteger

import scala.collection.JavaConverters._
import scala.util.Try
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.sun.net.httpserver.{HttpExchange, HttpServer}

import org.apache.spark.sql.SparkSession

import io.colline.listener.{Config, J, Versions}

/**
 * `colline analyze`'s JVM: one local Spark session that analyzes SQL and never runs it, behind a
 * small HTTP API (docs/analyze.md). Started by dev/spark-analyze:
 *
 * {{{
 *   Server [--host H] [--port N] [--work DIR] [--catalog memory|hive] [--metastore DIR|jdbc:…|thrift://…]
 *          [--warehouse DIR] [--ddl FILE]... [--token-file F | --no-token] [--max-bytes N]
 *          [--deadline S] [--read-timeout S] [--threads N] [--queue N] [--parent-stdin]
 * }}}
 *
 * `GET /healthz` answers `{"status": "ok", …}`; `POST /v1/analyze` takes a JSON request
 * (`{"app", "namespace", "reads", "infer", "conf": {k: v}, "tables": [{"name", "columns": [{"name",
 * "type", "nullable"}], "partitionColumns", "provider", "source"}], "schema": [{"name", "sql"}],
 * "files": [{"name", "sql"}]}`) and answers, per table, file and statement, what became of it;
 * `POST /v1/names` takes the same request and answers the tables its SQL names that nothing
 * defines (`{"names": [{"database", "table"}]}`), parsing only, for the caller to give them as
 * `tables` (from colline's graph).
 *
 * Who may call it (Access): a bearer token on every request, generated into `--token-file` (or
 * `<work>/token`) when the file does not exist, 0600; `--no-token` only on loopback, and a host
 * other than loopback never without a token; the Host header on loopback; no cross-site browser
 * request; `Content-Type: application/json`; bodies up to `--max-bytes` (413 above).
 *
 * How long: one analysis at a time (the catalog is shared), on one thread, `--queue` requests
 * waiting at most (503 above); each within `--deadline` seconds from its arrival (503 after: the
 * analysis stops itself, see Deadline); a client has `--read-timeout` seconds to send its request
 * (the JDK server's maxReqTime), and the JDK server never holds more than `--threads` × 8
 * connections. A 500 answer says an error id, never the exception: the log has it.
 *
 * On stdout, once ready: `COLLINE_ANALYZE_READY http://host:port spark=<version> startupMs=<ms> tokenFile=<path>`.
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
      noToken: Boolean = false,
      maxBytes: Int = 8 * 1024 * 1024,
      deadline: Int = 300,
      readTimeout: Int = 30,
      threads: Int = 8,
      queue: Int = 16,
      parentStdin: Boolean = false)

  private val Usage = "usage: Server [--host H] [--port N] [--work DIR] [--catalog memory|hive] " +
    "[--metastore DIR|jdbc:...|thrift://...] [--warehouse DIR] [--ddl FILE]... [--token-file F | --no-token] [--max-bytes N] " +
    "[--deadline SECONDS] [--read-timeout SECONDS] [--threads N] [--queue N] [--parent-stdin]"

  def main(args: Array[String]): Unit = {
    val opts = try parse(args.toList, Opts()) catch {
      case e: IllegalArgumentException => System.err.println("colline analyze: " + e.getMessage + "\n" + Usage); sys.exit(2)
    }
    def usage(msg: String): Nothing = { System.err.println("colline analyze: " + msg); sys.exit(2) }
    if (opts.metastore.nonEmpty && opts.ddl.nonEmpty)
      usage("--ddl needs the analyzer's own catalog, not --metastore (which is never written to)")
    if (opts.metastore.isEmpty && opts.warehouse.nonEmpty)
      usage("--warehouse goes with --metastore: the analyzer's own catalog keeps its warehouse in its work directory")
    if (opts.noToken && opts.tokenFile.nonEmpty) usage("--no-token and --token-file: choose one")
    val loopbackOnly = Access.isLoopback(opts.host)
    if (opts.noToken && !loopbackOnly) usage(s"--host ${opts.host} is not a loopback address: the analyzer needs a token there (no --no-token)")
    val work = new File(opts.work.getOrElse(Files.createTempDirectory("colline-analyze").toString)).getAbsoluteFile
    work.mkdirs()
    val token = if (opts.noToken) None else Some(tokenOf(new File(opts.tokenFile.getOrElse(new File(work, "token").toString))))
    // the JDK server's limits are read once, when its classes load: before the server is created
    System.setProperty("sun.net.httpserver.maxReqTime", opts.readTimeout.toString)
    System.setProperty("sun.net.httpserver.maxRspTime", (opts.deadline + opts.readTimeout + 30).toString)
    System.setProperty("sun.net.httpserver.maxConnections", (opts.threads * 8).toString)
    // TCP_NODELAY: the server writes an answer's headers and body apart, and with Nagle's
    // algorithm the body waits for the client's delayed ACK, about 40 ms on Linux: every small
    // answer (/healthz, /v1/names) took 44 ms instead of 1
    System.setProperty("sun.net.httpserver.nodelay", "true")

    val spark = session(work, opts.catalog, opts.metastore, opts.warehouse)
    val root = if (opts.metastore.isEmpty) Some(new File(work, "warehouse").getCanonicalFile) else None
    val analyzer = new Analyzer(spark, Config.Defaults, root)
    opts.ddl.foreach { f =>
      val text = new String(Files.readAllBytes(Paths.get(f)), StandardCharsets.UTF_8)
      val failed = analyzer.load(Seq(Part(f, text))).items.flatMap {
        case o: J.Obj => o.get("statements").toSeq.flatMap { case a: J.Arr => a.items; case _ => Nil }
        case _ => Nil
      }.collect { case s: J.Obj if !s.get("outcome").contains(J.Str("applied")) => J.render(s) }
      failed.foreach(s => System.err.println(s"colline analyze: $f: a schema statement was not registered: $s"))
    }

    val server = HttpServer.create(new InetSocketAddress(opts.host, opts.port), 64)
    val access = Access(token, loopbackOnly, server.getAddress.getPort, opts.maxBytes.toLong)
    server.setExecutor(Executors.newFixedThreadPool(opts.threads, daemon("colline-analyze-http")))
    val analysis = new ThreadPoolExecutor(1, 1, 0L, TimeUnit.MILLISECONDS, new ArrayBlockingQueue[Runnable](opts.queue),
      daemon("colline-analyze"))
    server.createContext("/healthz", ex => answer(ex, access, opts.maxBytes, "GET") { _ =>
      J.obj("status" -> J.Str("ok"), "spark" -> J.Str(Versions.spark), "scala" -> J.Str(Versions.scalaBinary),
        "listener" -> J.Str(Versions.listener), "catalog" -> J.Str(if (analyzer.ownCatalog) opts.catalog else "metastore"))
    })
    /** A request's work on the analysis thread, within the deadline from its arrival. */
    def analysisOf(body: Array[Byte])(f: Request => J.Obj): J.Obj = {
      val req = request(body)
      val arrived = System.nanoTime()
      val task = new FutureTask[J.Obj](() => {
        val left = opts.deadline - (System.nanoTime() - arrived) / 1000000000L
        if (left <= 0) throw new DeadlineExceeded(opts.deadline)
        Deadline.within(left)(f(req))
      })
      try analysis.execute(task) catch {
        case _: RejectedExecutionException =>
          throw new Status(503, s"busy: ${opts.queue} requests are waiting for the analyzer (--queue); try again later")
      }
      try task.get(opts.deadline + 5L, TimeUnit.SECONDS) catch {
        case _: TimeoutException =>
          task.cancel(false) // a waiting request never starts; a running one stops itself at its deadline
          throw new Status(503, s"the analysis did not finish within its deadline of ${opts.deadline} s (--deadline)")
        case e: ExecutionException => throw e.getCause
      }
    }
    server.createContext("/v1/analyze", ex => answer(ex, access, opts.maxBytes, "POST")(body => analysisOf(body)(analyzer.run)))
    server.createContext("/v1/names", ex => answer(ex, access, opts.maxBytes, "POST")(body => analysisOf(body)(analyzer.names)))
    server.start()
    val startup = System.currentTimeMillis() - java.lang.management.ManagementFactory.getRuntimeMXBean.getStartTime
    println(s"COLLINE_ANALYZE_READY http://${opts.host}:${server.getAddress.getPort} spark=${Versions.spark} startupMs=$startup" +
      opts.tokenFile.orElse(if (token.isDefined) Some(new File(work, "token").toString) else None).map(" tokenFile=" + _).getOrElse(""))
    System.out.flush()

    val stop = () => { Try(server.stop(0)); Try(spark.stop()) }
    Runtime.getRuntime.addShutdownHook(new Thread(() => stop()))
    if (opts.parentStdin) { // the parent's end of our stdin closes when it exits, however it exits
      while (System.in.read() >= 0) {}
      sys.exit(0)
    }
  }

  private def parse(args: List[String], o: Opts): Opts = {
    def num(flag: String, v: String, min: Int, max: Int = Int.MaxValue): Int =
      Try(v.toInt).filter(n => n >= min && n <= max).getOrElse(throw new IllegalArgumentException(s"$flag $v: want $min to $max"))
    args match {
      case Nil => o
      case "--host" :: v :: rest => parse(rest, o.copy(host = v))
      case "--port" :: v :: rest => parse(rest, o.copy(port = num("--port", v, 0, 65535)))
      case "--work" :: v :: rest => parse(rest, o.copy(work = Some(v)))
      case "--catalog" :: v :: rest if v == "memory" || v == "hive" => parse(rest, o.copy(catalog = v))
      case "--catalog" :: v :: _ => throw new IllegalArgumentException(s"--catalog $v: want memory or hive")
      case "--metastore" :: v :: rest => parse(rest, o.copy(metastore = Some(v)))
      case "--warehouse" :: v :: rest => parse(rest, o.copy(warehouse = Some(v)))
      case "--ddl" :: v :: rest =>
        if (!new File(v).isFile) throw new IllegalArgumentException(s"--ddl $v: no such file")
        parse(rest, o.copy(ddl = o.ddl :+ v))
      case "--token-file" :: v :: rest => parse(rest, o.copy(tokenFile = Some(v)))
      case "--no-token" :: rest => parse(rest, o.copy(noToken = true))
      case "--max-bytes" :: v :: rest => parse(rest, o.copy(maxBytes = num("--max-bytes", v, 1)))
      case "--deadline" :: v :: rest => parse(rest, o.copy(deadline = num("--deadline", v, 1, 86400)))
      case "--read-timeout" :: v :: rest => parse(rest, o.copy(readTimeout = num("--read-timeout", v, 1, 3600)))
      case "--threads" :: v :: rest => parse(rest, o.copy(threads = num("--threads", v, 2, 256)))
      case "--queue" :: v :: rest => parse(rest, o.copy(queue = num("--queue", v, 1, 10000)))
      case "--parent-stdin" :: rest => parse(rest, o.copy(parentStdin = true))
      case x :: _ => throw new IllegalArgumentException(s"unknown or incomplete argument $x")
    }
  }

  /** The token of a file, created (0600, 32 random bytes in hex) when it does not exist. */
  private def tokenOf(f: File): String = {
    if (!f.exists()) {
      val bytes = new Array[Byte](32)
      new SecureRandom().nextBytes(bytes)
      val t = bytes.map(b => f"${b & 0xff}%02x").mkString
      Option(f.getAbsoluteFile.getParentFile).foreach(_.mkdirs())
      val perms = PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"))
      Files.write(Files.createFile(f.toPath, perms), t.getBytes(StandardCharsets.UTF_8))
    }
    val t = new String(Files.readAllBytes(f.toPath), StandardCharsets.UTF_8).trim
    if (t.isEmpty) { System.err.println(s"colline analyze: the token file $f is empty"); sys.exit(2) }
    Try(Files.getPosixFilePermissions(f.toPath)).foreach { p =>
      if (p.asScala.exists(x => x.name.startsWith("GROUP") || x.name.startsWith("OTHERS")))
        System.err.println(s"colline analyze: warning: the token file $f can be read by others than its owner (chmod 600 it)")
    }
    t
  }

  private def daemon(name: String): ThreadFactory = {
    val n = new AtomicInteger
    (r: Runnable) => { val t = new Thread(r, s"$name-${n.incrementAndGet()}"); t.setDaemon(true); t }
  }

  /**
   * The session: the analyzer's own catalog (in memory, or a Hive metastore in Derby under the
   * work directory; its warehouse inside the work directory), or a user's metastore, which it
   * only reads. Nothing runs, so one core does. Settings.Locked hold; Deadline's rules and
   * ScriptTables' are in its analyzer.
   */
  private[listener] def session(work: File, catalog: String, metastore: Option[String], warehouse: Option[String]): SparkSession = {
    System.setProperty("derby.system.home", new File(work, "derby").toString)
    System.setProperty("derby.stream.error.file", new File(work, "derby.log").toString)
    val b = SparkSession.builder()
      .master("local[1]")
      .appName("colline-analyze")
      .withExtensions(Deadline.inject _)
      .withExtensions(ScriptTables.inject _)
      .config("spark.ui.enabled", "false")
      .config("spark.driver.host", "127.0.0.1")
      .config("spark.driver.bindAddress", "127.0.0.1")
      .config("spark.local.dir", new File(work, "spark-local").toString)
      .config("spark.hadoop.hive.exec.scratchdir", new File(work, "hive-scratch").toString)
      .config("spark.hadoop.hive.exec.local.scratchdir", new File(work, "hive-local").toString)
      .config("spark.hadoop.hive.metastore.schema.verification", "false")
    Settings.Locked.foreach { case (k, v) => b.config(k, v) }
    val warehouseUri = (warehouse, metastore) match {
      case (Some(w), _) => new File(w).getAbsoluteFile.toURI.toString
      case (None, Some(m)) if new File(m, "warehouse").isDirectory => new File(m, "warehouse").getAbsoluteFile.toURI.toString
      case _ => new File(work, "warehouse").getCanonicalFile.toURI.toString
    }
    b.config("spark.sql.warehouse.dir", warehouseUri)
      .config("spark.hadoop.hive.metastore.warehouse.dir", warehouseUri)
    metastore match {
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
      case None if catalog == "hive" =>
        b.config("spark.sql.catalogImplementation", "hive")
          .config("spark.hadoop.javax.jdo.option.ConnectionURL",
            "jdbc:derby:;databaseName=" + new File(work, "metastore_db").getAbsolutePath + ";create=true")
          .config("spark.hadoop.datanucleus.schema.autoCreateAll", "true")
      case None =>
        // CREATE TABLE without USING or STORED AS makes a data source table, as on Spark 4 (on
        // 3.x it asks for a Hive table, which the in-memory catalog refuses): its lineage is the same
        b.config("spark.sql.catalogImplementation", "in-memory")
          .config("spark.sql.legacy.createHiveTableByDefault", "false")
    }
    // spark.* system properties (dev/spark-analyze -D…) reach the session through SparkConf
    val s = b.getOrCreate()
    s.sessionState.catalog.listDatabases() // open the catalog now, not in the first request
    s
  }

  private val mapper = new ObjectMapper()

  private[analyze] def request(body: Array[Byte]): Request = {
    val n: JsonNode = try mapper.readTree(body) catch {
      case NonFatal(e) => throw new BadRequest("the body is not JSON: " + String.valueOf(e.getMessage).split("\n")(0))
    }
    if (n == null || !n.isObject) throw new BadRequest("the body must be a JSON object")
    def text(o: JsonNode, k: String, d: String, at: String = ""): String = Option(o.get(k)).filterNot(_.isNull).map { v =>
      if (!v.isTextual) throw new BadRequest(s"$at$k: want a string"); v.asText()
    }.getOrElse(d)
    def array(o: JsonNode, k: String, at: String, what: String): Seq[(JsonNode, String)] = Option(o.get(k)).filterNot(_.isNull).map { a =>
      if (!a.isArray) throw new BadRequest(s"$at$k: want an array of $what")
      (0 until a.size()).map(i => a.get(i) -> s"$at$k[$i]")
    }.getOrElse(Nil)
    def parts(k: String): Seq[Part] = array(n, k, "", "{name, sql}").map { case (p, at) =>
      if (!p.isObject) throw new BadRequest(s"$at: want {name, sql}")
      val sql = Option(p.get("sql")).filter(_.isTextual).map(_.asText()).getOrElse(throw new BadRequest(s"$at.sql: want a string"))
      Part(text(p, "name", at, at + "."), sql)
    }
    def bool(o: JsonNode, k: String, d: Boolean, at: String = ""): Boolean = Option(o.get(k)).filterNot(_.isNull).map { v =>
      if (!v.isBoolean) throw new BadRequest(s"$at$k: want true or false"); v.asBoolean()
    }.getOrElse(d)
    val tables = array(n, "tables", "", "{name, columns, partitionColumns, provider, source}").map { case (t, at) =>
      if (!t.isObject) throw new BadRequest(s"$at: want {name, columns, ...}")
      val name = Option(t.get("name")).filter(_.isTextual).map(_.asText()).getOrElse(throw new BadRequest(s"$at.name: want a string"))
      val columns = array(t, "columns", at + ".", "{name, type, nullable}").map { case (c, cat) =>
        if (!c.isObject) throw new BadRequest(s"$cat: want {name, type, nullable}")
        val cn = Option(c.get("name")).filter(_.isTextual).map(_.asText()).getOrElse(throw new BadRequest(s"$cat.name: want a string"))
        ColumnSpec(cn, text(c, "type", "", cat + "."), bool(c, "nullable", d = true, cat + "."))
      }
      val partitions = array(t, "partitionColumns", at + ".", "column names").map { case (p, pat) =>
        if (!p.isTextual) throw new BadRequest(s"$pat: want a column name"); p.asText()
      }
      TableSpec(name, columns, partitions, text(t, "provider", "parquet", at + "."), text(t, "source", "", at + "."))
    }
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
    Request(app = text(n, "app", "colline-analyze"), namespace = text(n, "namespace", "default"), reads = bool(n, "reads", d = false),
      conf = conf, tables = tables, schema = parts("schema"), files = parts("files"), infer = bool(n, "infer", d = false))
  }

  private[analyze] final class BadRequest(msg: String) extends RuntimeException(msg)
  private[analyze] final class Status(val code: Int, msg: String) extends RuntimeException(msg)

  /**
   * Access checks (before the body is read), then f; every answer is JSON, every failure a status
   * with a message. An unexpected failure answers 500 with an id; the log has the exception.
   */
  private def answer(ex: HttpExchange, access: Access, maxBytes: Int, method: String)(f: Array[Byte] => J.Obj): Unit = {
    val (code, body) = try {
      access.check(ex.getRequestMethod, method, h => Option(ex.getRequestHeaders.getFirst(h))) match {
        case Some((status, msg)) => (status, J.obj("error" -> J.Str(msg)))
        case None => (200, f(read(ex.getRequestBody, maxBytes)))
      }
    } catch {
      case t: Throwable => failure(t, s"${ex.getRequestMethod} ${ex.getRequestURI.getPath}")
    }
    try {
      val bytes = J.toBytes(body)
      val h = ex.getResponseHeaders
      h.set("Content-Type", "application/json")
      h.set("X-Content-Type-Options", "nosniff")
      h.set("Cache-Control", "no-store")
      ex.sendResponseHeaders(code, bytes.length.toLong)
      ex.getResponseBody.write(bytes)
    } catch { case NonFatal(_) => } finally ex.close()
  }

  /** The answer to a failure: its status and message; an unexpected one is logged with an id, and answered with the id only. */
  private[analyze] def failure(t: Throwable, what: String): (Int, J.Obj) = t match {
    case s: Status => (s.code, J.obj("error" -> J.Str(s.getMessage)))
    case b: BadRequest => (400, J.obj("error" -> J.Str(b.getMessage)))
    case d: DeadlineExceeded => (503, J.obj("error" -> J.Str(d.getMessage + " (--deadline)")))
    case e: IllegalArgumentException => (400, J.obj("error" -> J.Str(e.getMessage)))
    case _ =>
      val id = java.util.UUID.randomUUID().toString.take(8)
      System.err.println(s"colline analyze: internal error $id on $what:")
      t.printStackTrace()
      (500, J.obj("error" -> J.Str(s"internal error $id: the analyzer's log has the details"), "id" -> J.Str(id)))
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
