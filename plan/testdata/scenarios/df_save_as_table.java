// saveAsTable: a new table (CTAS, mode create), overwrite (CTAS, mode replace), append (insert).
import org.apache.spark.sql.SparkSession;

public class df_save_as_table {
  public static void run(SparkSession spark) throws Exception {
    spark.sql("DROP DATABASE IF EXISTS df_save_as_table CASCADE");
    spark.sql("CREATE DATABASE df_save_as_table");
    spark.sql("CREATE TABLE df_save_as_table.src (id bigint, name string) USING parquet");
    var df = spark.table("df_save_as_table.src").selectExpr("id", "length(name) AS len");
    df.write().saveAsTable("df_save_as_table.dst");
    df.write().mode("overwrite").saveAsTable("df_save_as_table.dst");
    df.write().mode("append").saveAsTable("df_save_as_table.dst");
  }
}
