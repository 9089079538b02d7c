// createDataFrame from an RDD (LogicalRDD: an opaque source, no dataset) and from a local list
// (LocalRelation: inline data): writes with no column edges from a dataset.
import java.util.Arrays;
import java.util.List;

import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

public class df_rdd {
  public static void run(SparkSession spark) throws Exception {
    spark.sql("DROP DATABASE IF EXISTS df_rdd CASCADE");
    spark.sql("CREATE DATABASE df_rdd");
    spark.sql("CREATE TABLE df_rdd.dim (id bigint, country string) USING parquet");
    spark.sql("CREATE TABLE df_rdd.dst (id bigint, label string) USING parquet");
    StructType schema = new StructType().add("id", DataTypes.LongType).add("label", DataTypes.StringType);
    List<Row> rows = Arrays.asList(RowFactory.create(1L, "a"), RowFactory.create(2L, "b"));
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    // LogicalRDD, joined with a real table: only the table's columns have sources
    spark.createDataFrame(jsc.parallelize(rows), schema).createOrReplaceTempView("df_rdd_rows");
    spark.sql("INSERT INTO df_rdd.dst SELECT r.id, d.country FROM df_rdd_rows r JOIN df_rdd.dim d ON r.id = d.id");
    // LocalRelation
    spark.createDataFrame(rows, schema).write().insertInto("df_rdd.dst");
  }
}
