package io.colline.listener

import scala.util.Try

import org.apache.spark.SparkConf

/** The `spark.colline.*` settings, read once from the SparkConf. */
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
    producerProps: Map[String, String]) {

  def kafkaEnabled: Boolean = bootstrapServers.trim.nonEmpty
}

private[listener] object Config {
  val Prefix = "spark.colline."
  private val KafkaPrefix = Prefix + "kafka."

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
      else conf.getAll.filter(_._1.startsWith(Prefix)).toMap
    from(all)
  }

  def from(all: Map[String, String]): Config = {
    def get(k: String): Option[String] = all.get(Prefix + k).map(_.trim).filter(_.nonEmpty)
    def bool(k: String, d: Boolean) = get(k).flatMap(v => Try(v.toBoolean).toOption).getOrElse(d)
    def int(k: String, d: Int) = get(k).flatMap(v => Try(v.toInt).toOption).filter(_ > 0).getOrElse(d)
    def long(k: String, d: Long) = get(k).flatMap(v => Try(v.toLong).toOption).filter(_ >= 0).getOrElse(d)
    val reserved = Set("bootstrapServers", "topic")
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
      producerProps = producer)
  }
}
