// A DataFrame program for e2e/safety_test.go (run by dev/spark-sql): JDBC writes and reads with a
// password in the options and in the URL, a failing write whose error message holds both secrets,
// a very wide CTAS (above spark.colline.event.maxBytes) and ordinary writes. Derby is the embedded
// database Spark's Hive support already ships.
import java.util.List;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

public class SafetyJob {
  // The test greps Kafka and the capture files for these (and their distinctive tails).
  static final String OPT_PW = "OptPw-7f3a9c41";
  static final String URL_PW = "UrlPw-2b8e1d57";
  static final String DRIVER = "org.apache.derby.jdbc.EmbeddedDriver";

  public static void run(SparkSession spark) throws Exception {
    String db = System.getProperty("safety.derby", System.getProperty("java.io.tmpdir") + "/colline-safety-derby");
    String url = "jdbc:derby:" + db + ";create=true;user=app;password=" + URL_PW;

    // two writes first: with spark.colline.test.throwIn=handle:1,build:1 the listener fails on them
    spark.sql("CREATE TABLE warm (a INT) USING parquet");
    spark.sql("INSERT INTO warm SELECT 1");
    spark.sql("INSERT INTO warm SELECT 2");

    // JDBC write (SaveIntoDataSourceCommand): password in the URL and in the options
    Dataset<Row> people = spark.sql("SELECT id, concat('n', CAST(id AS STRING)) AS name FROM range(5)");
    people.write().format("jdbc").option("url", url).option("dbtable", "APP.PEOPLE")
        .option("user", "app").option("password", OPT_PW).option("driver", DRIVER)
        .mode("overwrite").save();

    // JDBC read into a table, by dbtable and by query (the query text names a password too)
    Dataset<Row> back = spark.read().format("jdbc").option("url", url).option("dbtable", "APP.PEOPLE")
        .option("password", OPT_PW).option("driver", DRIVER).load();
    back.write().mode("overwrite").saveAsTable("people_copy");
    Dataset<Row> q = spark.read().format("jdbc").option("url", url).option("driver", DRIVER)
        // Spark created the Derby columns quoted, in lower case
        .option("query", "SELECT \"id\", \"name\" FROM APP.PEOPLE WHERE \"id\" >= 0 AND 'password=" + OPT_PW + "' <> 'x'")
        .load();
    q.write().mode("overwrite").saveAsTable("people_query");

    // a `USING jdbc` table (its options hold both secrets) written by SQL
    spark.sql("CREATE TABLE people_jdbc USING jdbc OPTIONS (url '" + url + "', dbtable 'APP.PEOPLE', " +
        "user 'app', password '" + OPT_PW + "', driver '" + DRIVER + "')");
    spark.sql("INSERT INTO people_jdbc SELECT id + 100, name FROM people_copy");

    // a write that fails at run time with both secrets in its error message
    try {
      spark.sql("INSERT INTO people_copy SELECT id, CAST(raise_error('cannot log in with password=" + OPT_PW +
          " to jdbc:derby://app:" + URL_PW + "@dbhost/x') AS STRING) FROM people_copy");
      throw new IllegalStateException("the failing write succeeded");
    } catch (IllegalStateException e) {
      throw e;
    } catch (Exception expected) {
      System.out.println("expected failure: " + expected.getClass().getSimpleName());
    }

    // a very wide plan: 600 computed columns (far above the test's spark.colline.event.maxBytes)
    StringBuilder cols = new StringBuilder("id");
    for (int i = 0; i < 600; i++) cols.append(", id * ").append(i).append(" + length(name) AS wide_col_").append(i);
    spark.sql("CREATE TABLE wide USING parquet AS SELECT " + cols + " FROM people_copy");

    // an ordinary write at the end: the listener still works after its failures
    spark.sql("CREATE TABLE final_copy USING parquet AS SELECT id, name FROM people_copy");

    List<Row> n = spark.sql("SELECT count(*) FROM people_jdbc").collectAsList();
    if (n.get(0).getLong(0) != 10L) throw new IllegalStateException("people_jdbc has " + n + " rows, want 10");
    if (spark.table("wide").columns().length != 601) throw new IllegalStateException("wide has the wrong width");
    System.out.println("SAFETY_JOB_OK");
  }
}
