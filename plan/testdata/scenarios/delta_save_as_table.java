// Delta through the DataFrame API: saveAsTable through DeltaCatalog (create, overwrite, append),
// a path write (format("delta").save) and a read of that path.
// connectors: delta
import org.apache.spark.sql.SparkSession;

public class delta_save_as_table {
  public static void run(SparkSession spark) throws Exception {
    spark.sql("DROP DATABASE IF EXISTS delta_save_as_table CASCADE");
    spark.sql("CREATE DATABASE delta_save_as_table");
    spark.sql("CREATE TABLE delta_save_as_table.src (id bigint, name string) USING parquet");
    var df = spark.table("delta_save_as_table.src").selectExpr("id", "length(name) AS len");
    df.write().format("delta").saveAsTable("delta_save_as_table.dst");
    df.write().format("delta").mode("overwrite").saveAsTable("delta_save_as_table.dst");
    df.write().format("delta").mode("append").saveAsTable("delta_save_as_table.dst");
    String path = "/tmp/colline-capture/out/delta_save_as_table/by_path";
    df.write().format("delta").mode("overwrite").save(path);
    spark.read().format("delta").load(path).selectExpr("id * 2 AS id", "len")
        .write().format("delta").mode("append").saveAsTable("delta_save_as_table.dst");
  }
}
