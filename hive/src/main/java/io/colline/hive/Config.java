package io.colline.hive;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * The {@code colline.*} settings, read from hive-site.xml (the hook: the session's HiveConf; the
 * metastore listener: the metastore's Configuration). The same settings as the Spark listener's
 * {@code spark.colline.*}, without the {@code spark.} prefix (docs/hive.md).
 */
final class Config {
  static final String PREFIX = "colline.";
  private static final String KAFKA_PREFIX = PREFIX + "kafka.";
  /** Spark's default {@code spark.redaction.regex}; colline.redaction.regex overrides it. */
  static final String REDACTION_DEFAULT = "(?i)secret|password|token|access[.]key";

  /** The keys read below (besides kafka.*, which go to the producer). */
  static final Set<String> KEYS = new HashSet<>(Arrays.asList(
      "enabled", "kafka.bootstrapServers", "kafka.topic", "kafka.retryMs", "queue.capacity", "namespace",
      "output.dir", "event.maxBytes", "shutdown.timeoutMs", "shutdown.stallMs", "sql.maskLiterals",
      "redaction.regex", "redaction.string.regex", "job.name", "test.throwIn"));

  final boolean enabled;
  final String bootstrapServers;
  final String topic;
  final int queueCapacity;
  final String namespace;
  final String outputDir; // null: off
  final int maxEventBytes;
  final long shutdownTimeoutMs;
  final long drainStallMs;
  final long kafkaRetryMs;
  final boolean maskLiterals;
  final String redactionRegex;
  final String stringRedactionRegex; // null: none
  final String jobName; // null: derived (docs/hive.md)
  final Map<String, String> producerProps;
  final Set<String> throwIn;
  /** Invalid values and unknown keys, one sentence each; logged once per JVM. */
  final List<String> problems;

  private Config(Map<String, String> all) {
    List<String> p = new ArrayList<>();
    this.problems = p;
    enabled = bool(all, "enabled", true, p);
    bootstrapServers = str(all, "kafka.bootstrapServers", "");
    topic = str(all, "kafka.topic", "colline.plans");
    queueCapacity = (int) num(all, "queue.capacity", 1000, 1, Integer.MAX_VALUE, p);
    namespace = str(all, "namespace", "default");
    outputDir = str(all, "output.dir", null);
    maxEventBytes = (int) num(all, "event.maxBytes", 8 * 1024 * 1024, 1, Integer.MAX_VALUE, p);
    shutdownTimeoutMs = num(all, "shutdown.timeoutMs", 10000L, 0, Long.MAX_VALUE, p);
    drainStallMs = num(all, "shutdown.stallMs", 2000L, 0, Long.MAX_VALUE, p);
    kafkaRetryMs = num(all, "kafka.retryMs", 30000L, 0, Long.MAX_VALUE, p);
    maskLiterals = bool(all, "sql.maskLiterals", true, p);
    redactionRegex = str(all, "redaction.regex", REDACTION_DEFAULT);
    stringRedactionRegex = str(all, "redaction.string.regex", null);
    jobName = str(all, "job.name", null);
    Map<String, String> producer = new TreeMap<>();
    Set<String> reserved = new HashSet<>(Arrays.asList("bootstrapServers", "topic", "retryMs"));
    for (Map.Entry<String, String> e : all.entrySet()) {
      String k = e.getKey();
      if (k.startsWith(KAFKA_PREFIX)) {
        if (!reserved.contains(k.substring(KAFKA_PREFIX.length()))) producer.put(k.substring(KAFKA_PREFIX.length()), e.getValue());
      } else if (k.startsWith(PREFIX) && !KEYS.contains(k.substring(PREFIX.length()))) {
        p.add("unknown setting " + k + ": ignored (known: " + new TreeMap<>(keyMap()).keySet() + ", " + KAFKA_PREFIX + "<producer property>)");
      }
    }
    producerProps = Collections.unmodifiableMap(producer);
    Set<String> t = new HashSet<>();
    String ti = str(all, "test.throwIn", null);
    if (ti != null) for (String s : ti.split(",")) if (!s.trim().isEmpty()) t.add(s.trim());
    throwIn = Collections.unmodifiableSet(t);
  }

  private static Map<String, Boolean> keyMap() {
    Map<String, Boolean> m = new TreeMap<>();
    for (String k : KEYS) m.put(PREFIX + k, true);
    return m;
  }

  /** The settings among conf's entries (a Hadoop Configuration is an Iterable of them). */
  static Config from(Iterable<Map.Entry<String, String>> conf) {
    Map<String, String> all = new TreeMap<>();
    if (conf != null) {
      for (Map.Entry<String, String> e : conf) {
        if (e.getKey() != null && e.getKey().startsWith(PREFIX) && e.getValue() != null) all.put(e.getKey(), e.getValue());
      }
    }
    return new Config(all);
  }

  static Config from(Map<String, String> all) {
    return from(all.entrySet());
  }

  boolean kafkaEnabled() {
    return !bootstrapServers.trim().isEmpty();
  }

  private static String str(Map<String, String> all, String k, String d) {
    String v = all.get(PREFIX + k);
    return v == null || v.trim().isEmpty() ? d : v.trim();
  }

  private static boolean bool(Map<String, String> all, String k, boolean d, List<String> p) {
    String v = str(all, k, null);
    if (v == null) return d;
    switch (v.toLowerCase(Locale.ROOT)) {
      case "true": return true;
      case "false": return false;
      default:
        p.add("invalid " + PREFIX + k + "=" + v + " (want true or false): using " + d);
        return d;
    }
  }

  private static long num(Map<String, String> all, String k, long d, long min, long max, List<String> p) {
    String v = str(all, k, null);
    if (v == null) return d;
    try {
      long n = Long.parseLong(v);
      if (n >= min && n <= max) return n;
    } catch (NumberFormatException ignored) {
      // reported below
    }
    p.add("invalid " + PREFIX + k + "=" + v + " (want " + (min > 0 ? "a positive integer" : "milliseconds, 0 or more") + "): using " + d);
    return d;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof Config)) return false;
    Config c = (Config) o;
    return enabled == c.enabled && bootstrapServers.equals(c.bootstrapServers) && topic.equals(c.topic)
        && queueCapacity == c.queueCapacity && namespace.equals(c.namespace) && Objects.equals(outputDir, c.outputDir)
        && maxEventBytes == c.maxEventBytes && shutdownTimeoutMs == c.shutdownTimeoutMs && drainStallMs == c.drainStallMs
        && kafkaRetryMs == c.kafkaRetryMs && maskLiterals == c.maskLiterals && redactionRegex.equals(c.redactionRegex)
        && Objects.equals(stringRedactionRegex, c.stringRedactionRegex) && Objects.equals(jobName, c.jobName)
        && producerProps.equals(c.producerProps) && throwIn.equals(c.throwIn);
  }

  @Override
  public int hashCode() {
    return Objects.hash(bootstrapServers, topic, namespace, outputDir, producerProps);
  }
}
