// unionByName (with allowMissingColumns): columns matched by name, missing ones are NULL.
import org.apache.spark.sql.SparkSession;

public class df_union_by_name {
  public static void run(SparkSession spark) throws Exception {
    spark.sql("DROP DATABASE IF EXISTS df_union_by_name CASCADE");
    spark.sql("CREATE DATABASE df_union_by_name");
    spark.sql("CREATE TABLE df_union_by_name.a (id bigint, name string) USING parquet");
    spark.sql("CREATE TABLE df_union_by_name.b (name string, id bigint, extra double) USING parquet");
    spark.sql("CREATE TABLE df_union_by_name.dst (id bigint, name string, extra double) USING parquet");
    spark.table("df_union_by_name.a").unionByName(spark.table("df_union_by_name.b"), true)
        .write().insertInto("df_union_by_name.dst");
  }
}
