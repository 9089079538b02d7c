package io.colline.listener

class ReportTest extends munit.FunSuite {
  test("the shutdown report counts lost events apart from those not published by design") {
    val p = new Publisher(Config.Defaults.copy(queueCapacity = 3))
    try {
      val m = p.metrics
      m.seen.addAndGet(20); m.published.addAndGet(9); m.truncated.addAndGet(1)
      m.droppedQueueFull.addAndGet(4); m.droppedKafkaDown.addAndGet(2); m.sendErrors.addAndGet(1)
      m.droppedNotCommand.addAndGet(3); m.droppedNoLineage.addAndGet(1)
      m.droppedNested.addAndGet(2)
      assertEquals(p.report("application end"),
        "at application end: 20 query executions seen, 9 events published (1 degraded to fit event.maxBytes), " +
          "7 lost (queue full 4, Kafka down 2, too large 0, send errors 1), 6 not published by design " +
          "(command results 0, plain queries 3, no lineage 1, nested writes 2); raise spark.colline.queue.capacity (3) if the queue was full")
      m.droppedQueueFull.set(0); m.droppedKafkaDown.set(0); m.sendErrors.set(0)
      assert(p.report("JVM shutdown").endsWith("no lineage 1, nested writes 2)"), p.report("JVM shutdown"))
    } finally {
      p.shutdown(0L)
      p.removeShutdownHook()
    }
  }
}
