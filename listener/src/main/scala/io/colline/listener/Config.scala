package io.colline.listener

import scala.util.Try

import org.apache.spark.SparkConf

/** The `spark.colline.*` settings (plus `spark.redaction.regex`), read once from the SparkConf. */
private[listener] final case class Config(
    enabled: Boolean,
    bootstrapServers: String,
    topic: String,
    queueCapacity: Int,
    namespace: String,
    outputDir: Option[String],
    maxEventBytes: Int,
    shutdownTimeoutMs: Long,
    maskSqlLiterals: Boolean,
    producerProps: Map[String, String],
    redactionRegex: Option[String] = None,
    publishReads: Boolean = false,
    streaming: Boolean = true,
    kafkaRetryMs: Long = 30000L,
    drainStallMs: Long = 2000L,
    faultInjection: Set[String] = Set.empty) {

  def kafkaEnabled: Boolean = bootstrapServers.trim.nonEmpty
}

private[listener] object Config {
  val Prefix = "spark.colline."
  private val KafkaPrefix = Prefix + "kafka."
  /** Spark's own key-redaction setting; its default, as in Spark 3.3–4.1. */
  val SparkRedactionKey = "spark.redaction.regex"
  val SparkRedactionDefault = "(?i)secret|password|token|access[.]key"

  val Defaults: Config = Config(
    enabled = true,
    bootstrapServers = "",
    topic = "colline.plans",
    queueCapacity = 1000,
    namespace = "default",
    outputDir = None,
    maxEventBytes = 8 * 1024 * 1024,
    shutdownTimeoutMs = 10000L,
    maskSqlLiterals = true,
    producerProps = Map.empty)

  /** The `spark.colline.*` keys read below (besides `kafka.*`, which go to the producer). */
  val Keys: Set[String] = Set(
    "enabled", "kafka.bootstrapServers", "kafka.topic", "kafka.retryMs", "queue.capacity", "namespace",
    "output.dir", "event.maxBytes", "shutdown.timeoutMs", "shutdown.stallMs", "sql.maskLiterals",
    "publishReads", "streaming.enabled", "test.throwIn") ++ ParentRun.Keys.collect {
    case k if k.startsWith(Prefix) => k.stripPrefix(Prefix)
  }

  def from(conf: SparkConf): Config = {
    val all: Map[String, String] =
      if (conf == null) Map.empty
      else conf.getAll.filter(kv => kv._1.startsWith(Prefix) || kv._1 == SparkRedactionKey).toMap
    from(all)
  }

  /** The settings, after logging (once per JVM, at WARN) every problem that `parse` finds. */
  def from(all: Map[String, String]): Config = {
    val (cfg, problems) = parse(all)
    problems.foreach(WarnOnce(_))
    cfg
  }

  /**
   * The settings and the problems found in them: invalid values (the default is used instead)
   * and unknown `spark.colline.*` keys (ignored), each as one sentence naming the key.
   */
  def parse(all: Map[String, String]): (Config, Seq[String]) = {
    val problems = Seq.newBuilder[String]
    def get(k: String): Option[String] = all.get(Prefix + k).map(_.trim).filter(_.nonEmpty)
    def invalid(k: String, v: String, want: String, used: Any): Unit =
      problems += s"invalid $Prefix$k=$v (want $want): using $used"
    def bool(k: String, d: Boolean): Boolean = get(k).map { v =>
      v.toLowerCase(java.util.Locale.ROOT) match {
        case "true" => true
        case "false" => false
        case _ => invalid(k, v, "true or false", d); d
      }
    }.getOrElse(d)
    def num[T](k: String, d: T, want: String)(conv: String => Option[T]): T =
      get(k).map(v => conv(v).getOrElse { invalid(k, v, want, d); d }).getOrElse(d)
    def int(k: String, d: Int) = num(k, d, "a positive integer")(v => Try(v.toInt).toOption.filter(_ > 0))
    def long(k: String, d: Long) = num(k, d, "milliseconds, 0 or more")(v => Try(v.toLong).toOption.filter(_ >= 0))
    val reserved = Set("bootstrapServers", "topic", "retryMs")
    val producer = all.collect {
      case (k, v) if k.startsWith(KafkaPrefix) && !reserved(k.stripPrefix(KafkaPrefix)) =>
        k.stripPrefix(KafkaPrefix) -> v
    }
    all.keys.toSeq.sorted.foreach { k =>
      if (k.startsWith(Prefix) && !k.startsWith(KafkaPrefix) && !Keys(k.stripPrefix(Prefix)))
        problems += s"unknown setting $k: ignored (known: ${Keys.toSeq.sorted.map(Prefix + _).mkString(", ")}, $KafkaPrefix<producer property>)"
    }
    val cfg = Config(
      enabled = bool("enabled", Defaults.enabled),
      bootstrapServers = get("kafka.bootstrapServers").getOrElse(""),
      topic = get("kafka.topic").getOrElse(Defaults.topic),
      queueCapacity = int("queue.capacity", Defaults.queueCapacity),
      namespace = get("namespace").getOrElse(Defaults.namespace),
      outputDir = get("output.dir"),
      maxEventBytes = int("event.maxBytes", Defaults.maxEventBytes),
      shutdownTimeoutMs = long("shutdown.timeoutMs", Defaults.shutdownTimeoutMs),
      maskSqlLiterals = bool("sql.maskLiterals", Defaults.maskSqlLiterals),
      producerProps = producer,
      redactionRegex = Some(all.get(SparkRedactionKey).map(_.trim).filter(_.nonEmpty).getOrElse(SparkRedactionDefault)),
      publishReads = bool("publishReads", Defaults.publishReads),
      streaming = bool("streaming.enabled", Defaults.streaming),
      kafkaRetryMs = long("kafka.retryMs", Defaults.kafkaRetryMs),
      drainStallMs = long("shutdown.stallMs", Defaults.drainStallMs),
      // test-only: where to throw on purpose (init, handle, build, stream), to prove nothing reaches Spark
      faultInjection = get("test.throwIn").map(_.split(",").map(_.trim).filter(_.nonEmpty).toSet).getOrElse(Set.empty))
    (cfg, problems.result())
  }
}

/**
 * WARN lines that are worth saying once per JVM: a setting is read by every session's listener,
 * so the same problem would otherwise be logged again and again.
 */
private[listener] object WarnOnce {
  private val said = java.util.concurrent.ConcurrentHashMap.newKeySet[String]()

  def apply(msg: String, t: Throwable = null): Unit = try {
    if (said.size < 1000 && said.add(msg)) {
      val log = org.slf4j.LoggerFactory.getLogger("io.colline.listener.CollineListener")
      log.warn(Causes.append("colline: " + msg, t))
    }
  } catch { case _: Throwable => }
}
