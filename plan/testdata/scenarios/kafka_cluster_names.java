// One Kafka topic named through two bootstrap servers of the same cluster: a job writes it
// through 127.0.0.1:<port> and another reads it through localhost:<port> (the same broker,
// dev/services'). The events carry the servers as each job gave them; the consumer's cluster
// names (COLLINE_KAFKA_CLUSTERS) make them one dataset (TestKafkaClusterNames). The topic is
// created here when missing.
// connectors: kafka
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.AdminClient;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.spark.sql.SparkSession;

public class kafka_cluster_names {
  public static void run(SparkSession spark) throws Exception {
    String servers = System.getProperty("colline.scenario.kafka");
    String port = servers.substring(servers.lastIndexOf(':') + 1);
    String other = "localhost:" + port;
    String topic = "colline.scenario.kafka_cluster_names";
    try (AdminClient admin = AdminClient.create(Map.of("bootstrap.servers", servers))) {
      admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
    } catch (ExecutionException e) {
      if (!(e.getCause() instanceof TopicExistsException)) throw e;
    }
    spark.sql("DROP DATABASE IF EXISTS kafka_cluster_names CASCADE");
    spark.sql("CREATE DATABASE kafka_cluster_names");
    spark.sql("CREATE TABLE kafka_cluster_names.orders (id bigint, amount double) USING parquet");
    spark.sql("CREATE TABLE kafka_cluster_names.dst (k string, v string) USING parquet");

    // written through one server
    spark.table("kafka_cluster_names.orders").selectExpr("CAST(id AS STRING) AS key", "CAST(amount AS STRING) AS value")
        .write().format("kafka").option("kafka.bootstrap.servers", servers).option("topic", topic).save();
    // read through another server of the same cluster
    spark.read().format("kafka").option("kafka.bootstrap.servers", other + "," + servers).option("subscribe", topic)
        .option("startingOffsets", "earliest").load()
        .selectExpr("CAST(key AS STRING) AS k", "CAST(value AS STRING) AS v")
        .write().insertInto("kafka_cluster_names.dst");
  }
}
