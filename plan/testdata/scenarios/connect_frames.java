// Spark Connect: DataFrame jobs, the twin of connect_frames.py (which dev/capture-connect sends
// through a Spark Connect server): saveAsTable of an aggregate, insertInto, a write to a path, a
// temporary view read by a CTAS. TestSparkConnectGoldens compares the two event by event.
import static org.apache.spark.sql.functions.*;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

public class connect_frames {
  public static void run(SparkSession spark) throws Exception {
    spark.sql("DROP DATABASE IF EXISTS connect_frames CASCADE");
    spark.sql("CREATE DATABASE connect_frames");
    spark.sql("CREATE TABLE connect_frames.events (id BIGINT, kind STRING, amount DOUBLE, ts TIMESTAMP) USING parquet");
    spark.sql("CREATE TABLE connect_frames.kinds (kind STRING, total DOUBLE, n BIGINT) USING parquet");
    Dataset<Row> events = spark.table("connect_frames.events");
    events.where(col("amount").gt(0))
        .withColumn("day", to_date(col("ts")))
        .groupBy("kind", "day")
        .agg(sum("amount").alias("total"), count("id").alias("n"))
        .write().mode("overwrite").saveAsTable("connect_frames.daily");
    events.groupBy("kind").agg(sum("amount").alias("total"), count("id").alias("n"))
        .write().mode("append").insertInto("connect_frames.kinds");
    events.select(col("id"), upper(col("kind")).alias("kind"))
        .write().mode("overwrite").parquet("/tmp/colline-capture/out/connect_frames");
    events.where(col("kind").equalTo("click")).createOrReplaceTempView("clicks");
    spark.sql("CREATE TABLE connect_frames.click_ids USING parquet AS SELECT id, amount * 2 AS doubled FROM clicks");
  }
}
