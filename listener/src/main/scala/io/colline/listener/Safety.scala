package io.colline.listener

/**
 * The last pass over an event before it leaves the driver: every free-text string goes through
 * `Redact.secrets` (URL user info, credential assignments, `spark.redaction.regex`), whatever
 * node or dataset code produced it. Names, types and class names are identifiers, not text.
 */
private[listener] object Scrub {
  private val Identifiers: java.util.HashSet[String] = javaSet(
    "class", "type", "qualifier", "namespace", "catalog", "provider", "tableType", "format",
    "kind", "mode", "schemaVersion", "eventId", "emittedAt", "endedAt",
    "jvmId", "funcName", "status", "id", "runId", "exprId", "version", "spark", "scala")
  /** Column names: Spark names an unaliased expression after its SQL, literals included. */
  private val Names: java.util.HashSet[String] = javaSet("name", "columns", "partitionColumns")

  // java.util.HashSet: looked up for every field of every event (Scala's immutable HashSet was ~10 % of a build + scrub)
  private def javaSet(ks: String*): java.util.HashSet[String] = {
    val s = new java.util.HashSet[String]()
    ks.foreach(s.add)
    s
  }

  def event(e: J.Obj): Unit = new Pass().obj(e)

  /**
   * One event's pass. A shared object (J.Obj.shared, a column listed by every node above it) is
   * scrubbed once: redacting a redacted string again need not give the same string. Redaction is a
   * function of the string, and the rest of an event repeats strings too (expressions' names and
   * SQL in several nodes): each distinct name and text is redacted once per event.
   */
  private final class Pass {
    private val names = new java.util.HashMap[String, String]()
    private val texts = new java.util.HashMap[String, String]()
    private val done = new java.util.IdentityHashMap[J.Obj, java.lang.Boolean]()

    private def once(seen: java.util.HashMap[String, String], s: String, f: String => String): String = {
      var r = seen.get(s)
      if (r == null) {
        r = f(s)
        seen.put(s, r)
      }
      r
    }

    def obj(o: J.Obj): Unit = if (!o.shared || done.put(o, java.lang.Boolean.TRUE) == null) {
      var i = 0
      while (i < o.size) {
        val k = o.key(i)
        if (!Identifiers.contains(k)) {
          val v = o.value(i)
          val nv = value(k, v)
          if (nv ne v) o.set(i, nv)
        }
        i += 1
      }
    }

    private def value(k: String, v: J): J = v match {
      case J.Str(s) =>
        val r =
          if (k == "url") Redact.secrets(Redact.jdbcUrl(s))
          else if (Names.contains(k)) once(names, s, Redact.name)
          else once(texts, s, Redact.secrets)
        if (r == s) v else J.Str(r)
      case o: J.Obj => obj(o); o
      case a: J.Arr =>
        var i = 0
        while (i < a.items.size) {
          val x = a.items(i)
          val nx = value(k, x)
          if (nx ne x) a.items(i) = nx
          i += 1
        }
        a
      case other => other
    }
  }
}

/**
 * The last steps of every event, published or analyzed: scrubbed (Scrub), then degraded level by
 * level (Degrade) while above `maxBytes`. Returns the bytes and the level reached; bytes still
 * above `maxBytes` after the last level are the caller's to drop.
 */
private[listener] object Seal {
  def apply(json: J.Obj, maxBytes: Int): (Array[Byte], Int) = {
    Scrub.event(json)
    var bytes = J.toBytes(json)
    var level = 0
    while (bytes.length > maxBytes && level < Degrade.Levels) {
      level += 1
      Degrade(json, level)
      bytes = J.toBytes(json)
    }
    (bytes, level)
  }
}

/**
 * Events above `spark.colline.event.maxBytes`: ever smaller forms that keep the identities (leaf
 * `dataset`s, `write` targets with their columns, `ddl`) and the plan tree, so the consumer can
 * still record table-level lineage. Each level is flagged `markers.truncated`.
 */
private[listener] object Degrade {
  val Levels = 3

  /** Level 1: no expressions; 2: no outputs except on leaves with a dataset, no args; 3: no outputs. */
  def apply(e: J.Obj, level: Int): Unit = {
    if (level >= 1) EventBuilder.degrade(e)
    if (level >= 2) nodes(e).foreach { n =>
      val leaf = n.get("dataset").exists(_ != J.Null)
      if (level >= 3 || !leaf) n.put("output", new J.Arr)
      n.put("args", new J.Obj)
      n.put("exprs", new J.Obj)
    }
    e.get("markers").foreach { case m: J.Obj => m.put("truncated", true); case _ => }
  }

  private def nodes(e: J.Obj): Seq[J.Obj] = e.get("nodes") match {
    case Some(a: J.Arr) => a.items.collect { case n: J.Obj => n }.toSeq
    case _ => Nil
  }
}

/**
 * Deliberate failures for tests: `spark.colline.test.throwIn=handle:1,build:1` throws a
 * StackOverflowError (not an Exception) the first time at each named place (`init`, `handle`,
 * `build`, `stream`; without `:n` every time). Nothing of it may reach Spark.
 */
private[listener] object Faults {
  private val counts = new java.util.concurrent.ConcurrentHashMap[String, java.util.concurrent.atomic.AtomicInteger]()

  def maybeThrow(cfg: Config, where: String): Unit = if (cfg.faultInjection.nonEmpty) {
    cfg.faultInjection.find(e => e == where || e.startsWith(where + ":")).foreach { e =>
      val limit = scala.util.Try(e.substring(where.length + 1).toInt).getOrElse(Int.MaxValue)
      val n = counts.computeIfAbsent(where, new java.util.function.Function[String, java.util.concurrent.atomic.AtomicInteger] {
        def apply(k: String) = new java.util.concurrent.atomic.AtomicInteger
      }).incrementAndGet()
      if (n <= limit) throw new StackOverflowError(s"colline test fault in $where")
    }
  }
}
