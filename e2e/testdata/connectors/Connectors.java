// A DataFrame program for e2e/listener_test.go, run with the jars of
// e2e/testdata/connectors/pom.xml: Kafka batch write and read, a Kafka -> Kafka Structured Streaming
// query, Iceberg (hadoop catalog `ice`), Delta Lake by path and a DataSourceV2 JDBC catalog
// (`derbycat`, Spark's JDBCTableCatalog over Derby, with a password in its URL).
// -Dconn.kafka=host:port -Dconn.in=TOPIC -Dconn.out=TOPIC -Dconn.dir=DIR
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.streaming.Trigger;

public class Connectors {
  public static void run(SparkSession spark) throws Exception {
    String kafka = System.getProperty("conn.kafka");
    String in = System.getProperty("conn.in");
    String out = System.getProperty("conn.out");
    String dir = System.getProperty("conn.dir");

    Dataset<Row> people = spark.sql("SELECT id, concat('name-', CAST(id AS STRING)) AS name FROM range(10)");

    // Kafka batch write (SaveIntoDataSourceCommand) and read (LogicalRelation(KafkaRelation))
    people.selectExpr("CAST(id AS STRING) AS key", "to_json(struct(id, name)) AS value")
        .write().format("kafka").option("kafka.bootstrap.servers", kafka).option("topic", in).save();
    spark.read().format("kafka").option("kafka.bootstrap.servers", kafka).option("subscribe", in)
        .option("startingOffsets", "earliest").load()
        .selectExpr("CAST(key AS STRING) AS k", "CAST(value AS STRING) AS v")
        .write().mode("overwrite").saveAsTable("kafka_copy");

    // Kafka -> Kafka stream
    spark.readStream().format("kafka").option("kafka.bootstrap.servers", kafka).option("subscribe", in)
        .option("startingOffsets", "earliest").load()
        .selectExpr("key", "upper(CAST(value AS STRING)) AS value")
        .writeStream().format("kafka").queryName("kafka_to_kafka")
        .option("kafka.bootstrap.servers", kafka).option("topic", out)
        .option("checkpointLocation", dir + "/ckpt-kafka")
        .trigger(Trigger.AvailableNow()).start().awaitTermination();

    // Iceberg: v2 writes into a catalog table
    spark.sql("CREATE TABLE ice.db.people (id BIGINT, name STRING) USING iceberg");
    people.createOrReplaceTempView("people_v");
    spark.sql("INSERT INTO ice.db.people SELECT id, name FROM people_v");
    spark.sql("CREATE TABLE ice.db.people_upper USING iceberg AS SELECT id, upper(name) AS name FROM ice.db.people");

    // Delta Lake by path
    people.write().format("delta").mode("overwrite").save(dir + "/delta/people");
    spark.read().format("delta").load(dir + "/delta/people").where("id > 3")
        .write().mode("overwrite").saveAsTable("delta_copy");

    // DataSourceV2 JDBC catalog
    spark.sql("CREATE TABLE derbycat.APP.V2PEOPLE (id BIGINT, name VARCHAR(50))");
    spark.sql("INSERT INTO derbycat.APP.V2PEOPLE SELECT id, name FROM people_v");
    spark.sql("CREATE TABLE v2_copy USING parquet AS SELECT * FROM derbycat.APP.V2PEOPLE");

    long n = spark.table("ice.db.people_upper").count() + spark.table("delta_copy").count() + spark.table("v2_copy").count();
    if (n != 26) throw new IllegalStateException("row counts: " + n + ", want 26");
    System.out.println("CONNECTORS_OK");
  }
}
