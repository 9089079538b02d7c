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

  def from(conf: SparkConf): Config = {
    val all: Map[String, String] =
      if (conf == null) Map.empty
      else conf.getAll.filter(kv => kv._1.startsWith(Prefix) || kv._1 == SparkRedactionKey).toMap
    from(all)
  }

  def from(all: Map[String, String]): Config = {
    def get(k: String): Option[String] = all.get(Prefix + k).map(_.trim).filter(_.nonEmpty)
    def bool(k: String, d: Boolean) = get(k).flatMap(v => Try(v.toBoolean).toOption).getOrElse(d)
    def int(k: String, d: Int) = get(k).flatMap(v => Try(v.toInt).toOption).filter(_ > 0).getOrElse(d)
    def long(k: String, d: Long) = get(k).flatMap(v => Try(v.toLong).toOption).filter(_ >= 0).getOrElse(d)
    val reserved = Set("bootstrapServers", "topic", "retryMs")
    val producer = all.collect {
      case (k, v) if k.startsWith(KafkaPrefix) && !reserved(k.stripPrefix(KafkaPrefix)) =>
        k.stripPrefix(KafkaPrefix) -> v
    }
    Config(
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
  }
}
