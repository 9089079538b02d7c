// Part of dev/tpcds/capture: the fallback for the TPC-DS queries whose CTAS failed. Run by
// dev/spark-sql after the generated SQL, in the same session. For each query of -Dtpcds.names whose
// table tpcds_out.<q> does not exist:
//   1. If the result repeats a column name (q14b, q39a, q39b, q64), which a CTAS refuses
//      ([COLUMN_ALREADY_EXISTS]), the query runs as a DataFrame whose second and later occurrences
//      of a name are renamed <name>_2, <name>_3, ... (Dataset.toDF, which adds a Project), written
//      with saveAsTable: Spark plans that as the same CreateDataSourceTableAsSelectCommand as the
//      SQL CTAS.
//   2. Otherwise, or if that fails, it tries again with spark.sql.ansi.enabled=false. Spark 4 turns
//      ANSI mode on by default, and TPC-DS 2.4 is written for the non-ANSI semantics: q84 joins
//      strings with `+` (an analysis error under ANSI) and q90 divides by a count that is 0 on the
//      empty tables (a runtime error under ANSI).
// Every outcome is printed on a line starting with "tpcds: ".
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

public class TpcdsDuplicateColumns {
  private static final String ANSI = "spark.sql.ansi.enabled";

  public static void run(SparkSession spark) throws Exception {
    Path dir = Path.of(System.getProperty("tpcds.queries"));
    for (String q : System.getProperty("tpcds.names", "").trim().split("\\s+")) {
      if (q.isEmpty() || spark.catalog().tableExists("tpcds_out", q)) continue;
      String sql = Files.readString(dir.resolve(q + ".sql"), StandardCharsets.UTF_8);
      try {
        String how = write(spark, q, sql, false);
        if (how != null) {
          System.out.printf("tpcds: %s: captured with %s%n", q, how);
          continue;
        }
      } catch (Exception e) {
        System.out.printf("tpcds: %s: failed again (%s); trying with %s=false%n", q, firstLine(e), ANSI);
      }
      String old = spark.conf().get(ANSI);
      spark.conf().set(ANSI, "false");
      try {
        System.out.printf("tpcds: %s: captured with %s=false and %s%n", q, ANSI, write(spark, q, sql, true));
      } catch (Exception e) {
        System.out.printf("tpcds: %s: NOT captured: %s%n", q, firstLine(e));
      } finally {
        spark.conf().set(ANSI, old);
      }
    }
  }

  /**
   * Writes tpcds_out.q from the query; returns how, or null when plain is false and the columns
   * have distinct names (a plain CTAS in the same settings already failed).
   */
  static String write(SparkSession spark, String q, String sql, boolean plain) {
    Dataset<Row> df = spark.sql(sql);
    String[] cols = df.columns();
    Map<String, Integer> seen = new HashMap<>();
    boolean renamed = false;
    for (int i = 0; i < cols.length; i++) {
      int n = seen.merge(cols[i].toLowerCase(Locale.ROOT), 1, Integer::sum);
      if (n > 1) {
        cols[i] = cols[i] + "_" + n;
        renamed = true;
      }
    }
    if (renamed) {
      df.toDF(cols).write().format("parquet").saveAsTable("tpcds_out." + q);
      return "saveAsTable after renaming duplicate columns: " + String.join(", ", cols);
    }
    if (!plain) return null;
    spark.sql("CREATE TABLE tpcds_out." + q + " USING parquet AS\n" + sql);
    return "the SQL CTAS";
  }

  static String firstLine(Exception e) {
    return (e.getClass().getSimpleName() + ": " + e.getMessage()).split("\n", 2)[0];
  }
}
