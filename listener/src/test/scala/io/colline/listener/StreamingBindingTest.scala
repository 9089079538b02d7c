package io.colline.listener

class StreamingBindingTest extends munit.FunSuite {
  test("a job of a streaming micro-batch names the query, its run (the job group) and the batch") {
    val props = new java.util.Properties()
    assertEquals(StreamBatch.of(props), None)
    assertEquals(StreamBatch.of(null), None)
    props.setProperty("sql.streaming.queryId", "q-1")
    props.setProperty("spark.jobGroup.id", "run-1")
    props.setProperty("streaming.sql.batchId", "7")
    assertEquals(StreamBatch.of(props), Some(StreamBatch("q-1", "run-1", Some(7L))))
    props.setProperty("streaming.sql.batchId", "not a number")
    assertEquals(StreamBatch.of(props), Some(StreamBatch("q-1", "run-1", None)))
  }

  test("an execution bound to a run the listener never saw says the run, with no plan") {
    val b = new MicroBatchBinding(Some(StreamBatch("q-2", "run-unknown", Some(3L))))
    val json = b.json.map(o => new String(J.toBytes(o, pretty = false), "UTF-8"))
    assertEquals(json, Some("""{"id":"q-2","runId":"run-unknown","name":null,"batchId":3}"""))
    assertEquals(new MicroBatchBinding(None).json, None)
  }

  test("identifier parts that are paths: a table named by path") {
    for (p <- Seq("/tmp/x", "file:/tmp/x", "s3a://bucket/x", "hdfs://nn:8020/w")) assert(Tables.isPath(p), p)
    for (p <- Seq("db", "events", "delta", "", null, "a:b")) assert(!Tables.isPath(p), String.valueOf(p))
  }

  test("a path named by the table it is: the table, without the tags it had when described") {
    def table(more: (String, J)*) = J.obj(Seq[(String, J)]("kind" -> J.Str("table"), "catalog" -> J.Str("spark_catalog"),
      "namespace" -> J.strs(Seq("db")), "name" -> J.Str("t_at_path")) ++ more: _*)
    Tables.learn(table("location" -> J.Str("file:/tmp/colline-test/t_at_path"),
      "columnComments" -> J.obj("c" -> J.Str("#pii")), "tagProperties" -> J.obj()))
    val json = Tables.atPath("file:///tmp/colline-test/t_at_path/").map(o => new String(J.toBytes(o, pretty = false), "UTF-8"))
    assertEquals(json, Some("""{"kind":"table","catalog":"spark_catalog","namespace":["db"],"name":"t_at_path","location":"file:/tmp/colline-test/t_at_path"}"""))
    Tables.forget(table())
    assertEquals(Tables.atPath("file:/tmp/colline-test/t_at_path"), None)
  }
}
