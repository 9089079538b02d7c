// Typed Dataset operations (map, filter, flatMap): opaque functions over deserialized objects.
// Every output column of a typed function reads every column it deserialized (TRANSFORMATION).
import java.util.Arrays;

import org.apache.spark.api.java.function.FilterFunction;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.api.java.function.MapFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

public class df_typed_map {
  public static void run(SparkSession spark) throws Exception {
    spark.sql("DROP DATABASE IF EXISTS df_typed_map CASCADE");
    spark.sql("CREATE DATABASE df_typed_map");
    spark.sql("CREATE TABLE df_typed_map.src (id bigint, name string, kind string) USING parquet");
    spark.sql("CREATE TABLE df_typed_map.dst (value string) USING parquet");
    Dataset<Row> src = spark.table("df_typed_map.src").select("name", "kind");
    // map over Rows: DeserializeToObject -> MapElements -> SerializeFromObject
    src.map((MapFunction<Row, String>) r -> r.getString(0) + "/" + r.getString(1), Encoders.STRING())
        .filter((FilterFunction<String>) s -> !s.isEmpty())
        .write().insertInto("df_typed_map.dst");
    // flatMap over Strings: MapPartitions
    spark.table("df_typed_map.src").select("name").as(Encoders.STRING())
        .flatMap((FlatMapFunction<String, String>) s -> Arrays.asList(s.split(" ")).iterator(), Encoders.STRING())
        .write().insertInto("df_typed_map.dst");
  }
}
