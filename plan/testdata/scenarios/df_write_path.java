// df.write to paths (InsertIntoHadoopFsRelationCommand without a table) and a read by path.
import org.apache.spark.sql.SparkSession;

public class df_write_path {
  public static void run(SparkSession spark) throws Exception {
    spark.sql("DROP DATABASE IF EXISTS df_write_path CASCADE");
    spark.sql("CREATE DATABASE df_write_path");
    spark.sql("CREATE TABLE df_write_path.src (id bigint, name string) USING parquet");
    String out = "/tmp/colline-capture/out/df_write_path";
    spark.table("df_write_path.src").selectExpr("id", "upper(name) AS name")
        .write().mode("overwrite").parquet(out + "/parquet");
    spark.read().parquet(out + "/parquet").where("id > 0")
        .write().mode("overwrite").format("json").save(out + "/json");
  }
}
