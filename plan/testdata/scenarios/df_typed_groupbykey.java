// groupByKey + mapGroups: AppendColumns for the key, MapGroups for the opaque function.
import java.util.Iterator;

import org.apache.spark.api.java.function.MapFunction;
import org.apache.spark.api.java.function.MapGroupsFunction;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

public class df_typed_groupbykey {
  public static void run(SparkSession spark) throws Exception {
    spark.sql("DROP DATABASE IF EXISTS df_typed_groupbykey CASCADE");
    spark.sql("CREATE DATABASE df_typed_groupbykey");
    spark.sql("CREATE TABLE df_typed_groupbykey.src (id bigint, name string, kind string) USING parquet");
    spark.sql("CREATE TABLE df_typed_groupbykey.dst (value string) USING parquet");
    spark.table("df_typed_groupbykey.src")
        .groupByKey((MapFunction<Row, String>) r -> r.getString(2), Encoders.STRING())
        .mapGroups((MapGroupsFunction<String, Row, String>) (k, rows) -> {
          int n = 0;
          for (Iterator<Row> it = rows; it.hasNext(); it.next()) n++;
          return k + n;
        }, Encoders.STRING())
        .write().insertInto("df_typed_groupbykey.dst");
  }
}
