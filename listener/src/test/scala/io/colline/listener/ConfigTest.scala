package io.colline.listener

class ConfigTest extends munit.FunSuite {
  private def parse(kv: (String, String)*) = Config.parse(kv.map { case (k, v) => (Config.Prefix + k, v) }.toMap)

  test("no settings: the defaults, no problems") {
    val (cfg, problems) = Config.parse(Map.empty)
    assertEquals(problems, Nil)
    assertEquals(cfg, Config.Defaults.copy(redactionRegex = Some(Config.SparkRedactionDefault)))
    assert(!cfg.kafkaEnabled)
  }

  test("every known key with a valid value is read and raises no problem") {
    val (cfg, problems) = parse(
      "enabled" -> "FALSE", "kafka.bootstrapServers" -> " b:9092 ", "kafka.topic" -> "t", "kafka.retryMs" -> "5",
      "queue.capacity" -> "7", "namespace" -> "ns", "output.dir" -> "/tmp/x", "event.maxBytes" -> "1024",
      "shutdown.timeoutMs" -> "0", "shutdown.stallMs" -> "9", "sql.maskLiterals" -> "false",
      "publishReads" -> "true", "streaming.enabled" -> "false", "test.throwIn" -> "init, build:1",
      "kafka.acks" -> "1")
    assertEquals(problems, Nil)
    assertEquals(Config.Keys.size, 20) // 14 + the 6 parent.* keys (ParentRun)
    assertEquals(cfg, Config(enabled = false, bootstrapServers = "b:9092", topic = "t", queueCapacity = 7,
      namespace = "ns", outputDir = Some("/tmp/x"), maxEventBytes = 1024, shutdownTimeoutMs = 0L,
      maskSqlLiterals = false, producerProps = Map("acks" -> "1"),
      redactionRegex = Some(Config.SparkRedactionDefault), publishReads = true, streaming = false,
      kafkaRetryMs = 5L, drainStallMs = 9L, faultInjection = Set("init", "build:1")))
  }

  test("an invalid value falls back to the default and names the key, the value and the default") {
    val (cfg, problems) = parse("enabled" -> "yes", "queue.capacity" -> "0", "event.maxBytes" -> "8MB",
      "shutdown.timeoutMs" -> "-1", "kafka.retryMs" -> "soon")
    assertEquals(cfg.enabled, true)
    assertEquals(cfg.queueCapacity, Config.Defaults.queueCapacity)
    assertEquals(cfg.maxEventBytes, Config.Defaults.maxEventBytes)
    assertEquals(cfg.shutdownTimeoutMs, Config.Defaults.shutdownTimeoutMs)
    assertEquals(cfg.kafkaRetryMs, Config.Defaults.kafkaRetryMs)
    assertEquals(problems.toSet, Set(
      "invalid spark.colline.enabled=yes (want true or false): using true",
      "invalid spark.colline.queue.capacity=0 (want a positive integer): using 1000",
      "invalid spark.colline.event.maxBytes=8MB (want a positive integer): using 8388608",
      "invalid spark.colline.shutdown.timeoutMs=-1 (want milliseconds, 0 or more): using 10000",
      "invalid spark.colline.kafka.retryMs=soon (want milliseconds, 0 or more): using 30000"))
  }

  test("an unknown spark.colline key is reported; kafka.* keys are producer properties") {
    val (cfg, problems) = parse("output.dri" -> "/tmp/x", "kafka.linger.ms" -> "5", "kafka.topic" -> "t")
    assertEquals(cfg.outputDir, None)
    assertEquals(cfg.producerProps, Map("linger.ms" -> "5"))
    assertEquals(problems.size, 1)
    assert(problems.head.startsWith("unknown setting spark.colline.output.dri: ignored (known: "), problems.head)
    assert(problems.head.contains("spark.colline.output.dir"), problems.head)
  }

  test("blank values are unset, not invalid") {
    val (cfg, problems) = parse("queue.capacity" -> "  ", "kafka.topic" -> "")
    assertEquals(problems, Nil)
    assertEquals(cfg.queueCapacity, Config.Defaults.queueCapacity)
    assertEquals(cfg.topic, Config.Defaults.topic)
  }

  test("spark.redaction.regex is taken over, its default otherwise") {
    assertEquals(Config.parse(Map(Config.SparkRedactionKey -> "(?i)pin"))._1.redactionRegex, Some("(?i)pin"))
    assertEquals(Config.parse(Map(Config.SparkRedactionKey -> " "))._1.redactionRegex, Some(Config.SparkRedactionDefault))
  }
}
