// Java/Scala UDFs (ScalaUDF expressions): opaque, but linked to their argument columns.
import static org.apache.spark.sql.functions.callUDF;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.udf;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.types.DataTypes;

public class df_udf {
  public static void run(SparkSession spark) throws Exception {
    spark.sql("DROP DATABASE IF EXISTS df_udf CASCADE");
    spark.sql("CREATE DATABASE df_udf");
    spark.sql("CREATE TABLE df_udf.src (id bigint, name string, kind string) USING parquet");
    spark.sql("CREATE TABLE df_udf.dst (id bigint, label string) USING parquet");
    spark.udf().register("clean_name", (UDF1<String, String>) s -> s == null ? null : s.trim(), DataTypes.StringType);
    // a registered UDF called from SQL
    spark.sql("INSERT INTO df_udf.dst SELECT id, clean_name(name) FROM df_udf.src");
    // an anonymous UDF of two columns in the DataFrame API
    UserDefinedFunction join = udf((UDF2<String, String, String>) (a, b) -> a + b, DataTypes.StringType);
    spark.table("df_udf.src").select(col("id"), join.apply(col("name"), col("kind")).as("label"))
        .write().insertInto("df_udf.dst");
    spark.table("df_udf.src").select(col("id"), callUDF("clean_name", col("kind")))
        .write().insertInto("df_udf.dst");
  }
}
