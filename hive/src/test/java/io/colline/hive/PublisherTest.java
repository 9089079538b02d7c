package io.colline.hive;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.net.ServerSocket;
import java.util.HashMap;
import java.util.Map;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;

import org.junit.Test;

/** A broken Kafka never holds up the caller: events are dropped and counted. */
public class PublisherTest {
  private static Publisher.Pending event(int i) {
    return new Publisher.Pending() {
      public String key() {
        return "k";
      }

      public String kind() {
        return "QUERY";
      }

      public JsonObject build(Redact r) {
        JsonObject e = Events.envelope("e" + i, "test", new Events.App("s", "job", "u", "default"),
            new Events.Query("QUERY", null, 1, System.currentTimeMillis()));
        e.add("hive", new JsonObject());
        return e;
      }
    };
  }

  @Test(timeout = 120_000)
  public void kafkaDownIsCountedAndOfferNeverBlocks() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort(); // closed again: nothing listens there
    }
    Map<String, String> m = new HashMap<>();
    m.put("colline.kafka.bootstrapServers", "127.0.0.1:" + port);
    m.put("colline.queue.capacity", "2");
    m.put("colline.kafka.max.block.ms", "500");
    m.put("colline.shutdown.timeoutMs", "3000");
    Publisher p = new Publisher(Config.from(m));
    long t0 = System.nanoTime();
    for (int i = 0; i < 50; i++) p.offer(event(i));
    long offerMs = (System.nanoTime() - t0) / 1_000_000;
    p.shutdown(3000);
    p.removeShutdownHook();
    // every event is published or counted as lost, once the worker has seen the queue empty
    Map<String, Long> s = p.metrics.snapshot();
    while (s.get("published") + s.get("droppedQueueFull") + s.get("droppedKafkaDown") + s.get("sendErrors") < 50) {
      Thread.sleep(20);
      s = p.metrics.snapshot();
    }
    assertEquals(s.toString(), 0L, (long) s.get("published"));
    assertEquals(s.toString(), 50L, s.get("enqueued") + s.get("droppedQueueFull"));
    assertTrue(s.toString(), s.get("droppedKafkaDown") >= 1);
    System.out.println("50 offers took " + offerMs + " ms; counters " + s);
  }

  @Test
  public void degradedEventsKeepTheirTables() {
    JsonObject e = new JsonObject();
    JsonObject markers = new JsonObject();
    markers.addProperty("truncated", false);
    e.add("markers", markers);
    JsonObject h = new JsonObject();
    h.addProperty("queryText", "insert ...");
    JsonArray edges = new JsonArray();
    JsonObject edge = new JsonObject();
    edge.addProperty("expression", "upper(a)");
    edges.add(edge);
    h.add("edges", edges);
    h.add("outputs", new JsonArray());
    e.add("hive", h);
    Publisher.degrade(e, 1);
    assertTrue(e.getAsJsonObject("markers").get("truncated").getAsBoolean());
    assertEquals(null, h.get("queryText"));
    assertEquals(null, h.getAsJsonArray("edges").get(0).getAsJsonObject().get("expression"));
    Publisher.degrade(e, 2);
    assertEquals(0, h.getAsJsonArray("edges").size());
    assertTrue(h.has("outputs"));
  }
}
