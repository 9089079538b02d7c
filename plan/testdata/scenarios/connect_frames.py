# Spark Connect: DataFrame jobs, the twin of connect_frames.java (which dev/capture runs in
# classic Spark), sent through a Spark Connect server by dev/connect/run.py: saveAsTable of an
# aggregate, insertInto, a write to a path, a temporary view read by a CTAS. The path is the
# capture's unless COLLINE_SCENARIO_OUT names another folder (the end-to-end test's).
import os

from pyspark.sql.functions import col, count, sum, to_date, upper


def run(spark):
    spark.sql("DROP DATABASE IF EXISTS connect_frames CASCADE")
    spark.sql("CREATE DATABASE connect_frames")
    spark.sql("CREATE TABLE connect_frames.events (id BIGINT, kind STRING, amount DOUBLE, ts TIMESTAMP) USING parquet")
    spark.sql("CREATE TABLE connect_frames.kinds (kind STRING, total DOUBLE, n BIGINT) USING parquet")
    events = spark.table("connect_frames.events")
    (events.where(col("amount") > 0)
        .withColumn("day", to_date(col("ts")))
        .groupBy("kind", "day")
        .agg(sum("amount").alias("total"), count("id").alias("n"))
        .write.mode("overwrite").saveAsTable("connect_frames.daily"))
    (events.groupBy("kind").agg(sum("amount").alias("total"), count("id").alias("n"))
        .write.mode("append").insertInto("connect_frames.kinds"))
    (events.select(col("id"), upper(col("kind")).alias("kind"))
        .write.mode("overwrite").parquet(os.environ.get("COLLINE_SCENARIO_OUT", "/tmp/colline-capture/out") + "/connect_frames"))
    events.where(col("kind") == "click").createOrReplaceTempView("clicks")
    spark.sql("CREATE TABLE connect_frames.click_ids USING parquet AS SELECT id, amount * 2 AS doubled FROM clicks")
