package io.colline.hive;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

import org.junit.Test;

public class ConfigTest {
  @Test
  public void defaults() {
    Config c = Config.from(new HashMap<>());
    assertTrue(c.enabled);
    assertFalse(c.kafkaEnabled());
    assertEquals("colline.plans", c.topic);
    assertEquals(1000, c.queueCapacity);
    assertEquals("default", c.namespace);
    assertTrue(c.problems.isEmpty());
  }

  @Test
  public void settingsProducerPropertiesAndProblems() {
    Map<String, String> m = new HashMap<>();
    m.put("colline.kafka.bootstrapServers", "k1:9092");
    m.put("colline.kafka.security.protocol", "SASL_SSL");
    m.put("colline.queue.capacity", "zero");
    m.put("colline.colour", "blue");
    m.put("hive.exec.post.hooks", "x");
    Config c = Config.from(m);
    assertTrue(c.kafkaEnabled());
    assertEquals("SASL_SSL", c.producerProps.get("security.protocol"));
    assertFalse(c.producerProps.containsKey("bootstrapServers"));
    assertEquals(1000, c.queueCapacity);
    assertEquals(2, c.problems.size());
    assertTrue(c.problems.toString(), c.problems.get(0).startsWith("invalid colline.queue.capacity=zero (want a positive integer): using 1000"));
    assertTrue(c.problems.toString(), c.problems.get(1).startsWith("unknown setting colline.colour: ignored"));
    assertEquals(c, Config.from(m));
    assertEquals(Arrays.asList(), Config.from(new HashMap<>()).problems);
  }
}
