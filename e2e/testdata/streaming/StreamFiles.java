// A DataFrame program for e2e/streaming_test.go (run by dev/spark-sql): two Structured Streaming
// queries over a JSON file source, run to completion with Trigger.AvailableNow: files -> parquet
// files, and files -> foreachBatch (which appends each batch to parquet files).
// -Dstream.dir=DIR: in/, out/, fb_out/ and checkpoints live there.
import java.nio.file.Path;

import org.apache.spark.api.java.function.VoidFunction2;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.apache.spark.sql.streaming.Trigger;

public class StreamFiles {
  public static void run(SparkSession spark) throws Exception {
    Path dir = Path.of(System.getProperty("stream.dir")).toAbsolutePath();
    String in = dir.resolve("in").toString();
    spark.sql("SELECT id, concat('name-', CAST(id AS STRING)) AS name FROM range(20)").write().json(in);

    Dataset<Row> src = spark.readStream().schema("id BIGINT, name STRING").json(in);
    StreamingQuery files = src.selectExpr("id", "upper(name) AS name_u")
        .writeStream().format("parquet").queryName("files_to_files")
        .option("checkpointLocation", dir.resolve("ckpt-files").toString())
        .option("path", dir.resolve("out").toString())
        .trigger(Trigger.AvailableNow()).start();
    files.awaitTermination();

    String fbOut = dir.resolve("fb_out").toString();
    StreamingQuery fb = src.where("id % 2 = 0").writeStream().queryName("files_foreach_batch")
        .option("checkpointLocation", dir.resolve("ckpt-fb").toString())
        .foreachBatch((VoidFunction2<Dataset<Row>, Long>) (batch, id) -> batch.write().mode("append").parquet(fbOut))
        .trigger(Trigger.AvailableNow()).start();
    fb.awaitTermination();

    long n = spark.read().parquet(dir.resolve("out").toString()).count();
    long m = spark.read().parquet(fbOut).count();
    if (n != 20 || m != 10) throw new IllegalStateException("stream outputs have " + n + " and " + m + " rows");
    System.out.println("STREAM_FILES_OK");
  }
}
