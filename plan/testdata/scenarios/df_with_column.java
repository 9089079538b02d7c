// withColumn / select / where chains build Projects and Filters like SQL does.
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.sha2;
import static org.apache.spark.sql.functions.upper;

import org.apache.spark.sql.SparkSession;

public class df_with_column {
  public static void run(SparkSession spark) throws Exception {
    spark.sql("DROP DATABASE IF EXISTS df_with_column CASCADE");
    spark.sql("CREATE DATABASE df_with_column");
    spark.sql("CREATE TABLE df_with_column.src (id bigint, name string, email string, amount double) USING parquet");
    spark.sql("CREATE TABLE df_with_column.dst (id bigint, name string, email_hash string, source string) USING parquet");
    spark.table("df_with_column.src")
        .withColumn("name", upper(col("name")))
        .withColumn("email_hash", sha2(col("email"), 256))
        .withColumn("source", lit("crm"))
        .where(col("amount").gt(0))
        .select("id", "name", "email_hash", "source")
        .write().insertInto("df_with_column.dst");
  }
}
