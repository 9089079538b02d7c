// A Delta or Iceberg table written by name and read by path, or written by path and read by name,
// is one dataset, keyed by its name: a managed Delta table read by its default location (SQL's
// delta.`path` and format("delta").load), written by path (format("delta").save and INSERT INTO
// delta.`path`); an external Delta table created at a LOCATION; an Iceberg table of the Hadoop
// catalog `ice` read and written by its location (format("iceberg").load / save).
// connectors: delta,iceberg
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

public class table_path_and_name {
  public static void run(SparkSession spark) throws Exception {
    spark.sql("DROP DATABASE IF EXISTS table_path_and_name CASCADE");
    spark.sql("CREATE DATABASE table_path_and_name");
    spark.sql("CREATE TABLE table_path_and_name.src (id bigint, name string, amount double) USING parquet");
    spark.sql("INSERT INTO table_path_and_name.src VALUES (1, 'a', 10.0), (2, 'b', 20.0)");

    // a managed Delta table: written by name, read and written by its path
    spark.sql("CREATE TABLE table_path_and_name.managed (id bigint, name string) USING delta");
    spark.sql("INSERT INTO table_path_and_name.managed SELECT id, name FROM table_path_and_name.src");
    Row detail = spark.sql("DESCRIBE DETAIL table_path_and_name.managed").select("location").first();
    String managed = detail.getString(0);
    spark.sql("CREATE TABLE table_path_and_name.copy (id bigint, name string) USING delta");
    spark.sql("INSERT INTO table_path_and_name.copy SELECT id, upper(name) FROM delta.`" + managed + "`");
    spark.read().format("delta").load(managed).selectExpr("id + 100 AS id", "name")
        .write().format("delta").mode("append").save(managed);
    spark.sql("INSERT INTO delta.`" + managed + "` SELECT id, name FROM table_path_and_name.copy");

    // an external Delta table: created at a location, written by path, read by name
    String external = "/tmp/colline-capture/out/table_path_and_name/external";
    spark.sql("CREATE TABLE table_path_and_name.external (id bigint, total double) USING delta LOCATION '" + external + "'");
    spark.table("table_path_and_name.src").selectExpr("id", "amount * 2 AS total")
        .write().format("delta").mode("append").save(external);
    spark.sql("INSERT INTO table_path_and_name.copy SELECT id, CAST(total AS string) FROM table_path_and_name.external");

    // an Iceberg table of the catalog `ice`: written by name, read and written by its location
    spark.sql("CREATE TABLE ice.table_path_and_name.events (id bigint, name string) USING iceberg");
    spark.sql("INSERT INTO ice.table_path_and_name.events SELECT id, name FROM table_path_and_name.src");
    String events = spark.sql("SELECT file_path FROM ice.table_path_and_name.events.files").first().getString(0);
    String location = events.substring(0, events.indexOf("/data/"));
    spark.read().format("iceberg").load(location).selectExpr("id", "lower(name) AS name")
        .write().format("delta").mode("append").saveAsTable("table_path_and_name.copy");
    spark.table("table_path_and_name.src").selectExpr("id * 10 AS id", "name")
        .write().format("iceberg").mode("append").save(location);
  }
}
