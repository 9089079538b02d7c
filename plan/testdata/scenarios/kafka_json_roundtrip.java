// Kafka batch sink and source with column lineage: one job writes to_json(struct(...)) into a
// topic's value (and a key), another reads the topic back through CAST and from_json into a table,
// and a SQL temporary view over the topic is read too. The broker is dev/services' (its address is
// in the topic's dataset key); the topic is created here when missing.
// connectors: kafka
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.AdminClient;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.spark.sql.SparkSession;

public class kafka_json_roundtrip {
  public static void run(SparkSession spark) throws Exception {
    String servers = System.getProperty("colline.scenario.kafka");
    String topic = "colline.scenario.kafka_json_roundtrip";
    try (AdminClient admin = AdminClient.create(Map.of("bootstrap.servers", servers))) {
      admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
    } catch (ExecutionException e) {
      if (!(e.getCause() instanceof TopicExistsException)) throw e;
    }
    spark.sql("DROP DATABASE IF EXISTS kafka_json_roundtrip CASCADE");
    spark.sql("CREATE DATABASE kafka_json_roundtrip");
    spark.sql("CREATE TABLE kafka_json_roundtrip.orders (id bigint, customer string, amount double, status string) USING parquet");
    spark.sql("CREATE TABLE kafka_json_roundtrip.dst (k string, id bigint, customer string, doubled double, kafka_offset bigint) USING parquet");

    // job 1: a batch write to the topic (key, value)
    spark.table("kafka_json_roundtrip.orders").where("status = 'paid'")
        .selectExpr("CAST(id AS STRING) AS key", "to_json(struct(id, customer, amount * 2 AS doubled)) AS value")
        .write().format("kafka").option("kafka.bootstrap.servers", servers).option("topic", topic).save();

    // job 2: a batch read of the topic, the JSON fields into columns
    spark.read().format("kafka").option("kafka.bootstrap.servers", servers).option("subscribe", topic)
        .option("startingOffsets", "earliest").load()
        .selectExpr("CAST(key AS STRING) AS k", "from_json(CAST(value AS STRING), 'id BIGINT, customer STRING, doubled DOUBLE') AS j", "offset")
        .selectExpr("k", "j.id", "j.customer", "j.doubled", "offset")
        .write().insertInto("kafka_json_roundtrip.dst");

    // the same read in SQL, through a temporary view over the topic
    spark.sql("CREATE OR REPLACE TEMPORARY VIEW events USING kafka OPTIONS ('kafka.bootstrap.servers' '" + servers
        + "', 'subscribe' '" + topic + "', 'startingOffsets' 'earliest')");
    spark.sql("INSERT INTO kafka_json_roundtrip.dst SELECT CAST(key AS STRING), CAST(get_json_object(CAST(value AS STRING), '$.id') AS BIGINT), "
        + "from_json(CAST(value AS STRING), 'customer STRING').customer, CAST(NULL AS DOUBLE), offset FROM events WHERE partition = 0");
  }
}
