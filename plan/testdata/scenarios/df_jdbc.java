// df.write.jdbc (SaveIntoDataSourceCommand) into embedded Derby, then spark.read.jdbc into a table.
// The password in the URL must not reach the event.
import java.util.Properties;

import org.apache.spark.sql.SparkSession;

public class df_jdbc {
  public static void run(SparkSession spark) throws Exception {
    spark.sql("DROP DATABASE IF EXISTS df_jdbc CASCADE");
    spark.sql("CREATE DATABASE df_jdbc");
    spark.sql("CREATE TABLE df_jdbc.src (id bigint, name string) USING parquet");
    spark.sql("CREATE TABLE df_jdbc.dst (id bigint, name string) USING parquet");
    String url = "jdbc:derby:memory:colline_df_jdbc;create=true;user=app;password=s3cret";
    spark.table("df_jdbc.src").selectExpr("id", "lower(name) AS name")
        .write().mode("overwrite").jdbc(url, "PEOPLE", new Properties());
    spark.read().jdbc(url, "PEOPLE", new Properties()).write().insertInto("df_jdbc.dst");
  }
}
