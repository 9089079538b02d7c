// A streaming query over a Kafka topic whose foreachBatch upserts every micro-batch into a Delta
// table (MERGE) and appends its big orders, joined with a static table, to another: the writes
// read the micro-batch DataFrame, which stands for the stream's Kafka source and its columns.
// Six records read three at a time (Trigger.AvailableNow, maxOffsetsPerTrigger) make two
// micro-batches: the same lineage twice. The broker is dev/services' (its address is in the
// topic's dataset key); records are produced with a plain Kafka producer, and the stream starts
// at the offset the topic had before them, so that every capture reads the same six.
// e2e/foreachbatch_test.go runs it too, with -Dstream.topic and -Dstream.dir of its own.
// connectors: kafka,delta
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.AdminClient;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.spark.api.java.function.VoidFunction2;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.apache.spark.sql.streaming.Trigger;

public class stream_foreach_batch {
  public static void run(SparkSession spark) throws Exception {
    String servers = System.getProperty("colline.scenario.kafka");
    String topic = System.getProperty("stream.topic", "colline.scenario.stream_foreach_batch");
    String checkpoint = System.getProperty("stream.dir", "/tmp/colline-capture/out/stream_foreach_batch") + "/checkpoint";
    long start;
    try (AdminClient admin = AdminClient.create(Map.of("bootstrap.servers", servers))) {
      try {
        admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
      } catch (ExecutionException e) {
        if (!(e.getCause() instanceof TopicExistsException)) throw e;
      }
      TopicPartition p0 = new TopicPartition(topic, 0);
      start = admin.listOffsets(Map.of(p0, OffsetSpec.latest())).partitionResult(p0).get().offset();
    }
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of("bootstrap.servers", (Object) servers),
        new StringSerializer(), new StringSerializer())) {
      for (int i = 1; i <= 6; i++) {
        String status = i == 4 ? "test" : "paid";
        producer.send(new ProducerRecord<>(topic, String.valueOf(i),
            "{\"id\": " + (i % 4) + ", \"customer\": " + (i % 3) + ", \"amount\": " + (i * 10.5) + ", \"status\": \"" + status + "\"}"));
      }
    }

    spark.sql("DROP DATABASE IF EXISTS stream_foreach_batch CASCADE");
    spark.sql("CREATE DATABASE stream_foreach_batch");
    spark.sql("CREATE TABLE stream_foreach_batch.customers (id bigint, name string, tier string) USING delta");
    spark.sql("INSERT INTO stream_foreach_batch.customers VALUES (0, 'ann', 'gold'), (1, 'bob', 'silver'), (2, 'cy', 'gold')");
    spark.sql("CREATE TABLE stream_foreach_batch.orders (id bigint, customer bigint, amount double, status string, seen_at timestamp) USING delta");
    spark.sql("CREATE TABLE stream_foreach_batch.big_orders (id bigint, customer_name string, amount double) USING delta");

    Dataset<Row> orders = spark.readStream().format("kafka")
        .option("kafka.bootstrap.servers", servers).option("subscribe", topic)
        .option("startingOffsets", "{\"" + topic + "\": {\"0\": " + start + "}}")
        .option("maxOffsetsPerTrigger", "3").load()
        .selectExpr("from_json(CAST(value AS STRING), 'id BIGINT, customer BIGINT, amount DOUBLE, status STRING') AS o", "timestamp")
        .selectExpr("o.id AS id", "o.customer AS customer", "o.amount AS amount", "o.status AS status", "timestamp AS seen_at")
        .where("status <> 'test'");
    StreamingQuery q = orders.writeStream().queryName("orders_upsert")
        .option("checkpointLocation", checkpoint)
        .foreachBatch((VoidFunction2<Dataset<Row>, Long>) (batch, id) -> {
          SparkSession s = batch.sparkSession();
          batch.createOrReplaceTempView("micro_batch");
          s.sql("MERGE INTO stream_foreach_batch.orders t USING micro_batch b ON t.id = b.id "
              + "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *");
          s.sql("INSERT INTO stream_foreach_batch.big_orders SELECT b.id, c.name, b.amount FROM micro_batch b "
              + "JOIN stream_foreach_batch.customers c ON b.customer = c.id WHERE b.amount > 20");
        })
        .trigger(Trigger.AvailableNow()).start();
    q.awaitTermination();
    long n = spark.table("stream_foreach_batch.orders").count();
    if (n != 3) throw new IllegalStateException("stream_foreach_batch.orders has " + n + " rows, want 3");
  }
}
