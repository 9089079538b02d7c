// DataSource V2 writes through the built-in JDBC catalog (JDBCTableCatalog) on embedded Derby:
// INSERT INTO (AppendData), INSERT OVERWRITE (OverwriteByExpression), writeTo().create() (v2 CTAS).
import org.apache.spark.sql.SparkSession;

public class df_v2_jdbc_catalog {
  public static void run(SparkSession spark) throws Exception {
    spark.sql("DROP DATABASE IF EXISTS df_v2_jdbc_catalog CASCADE");
    spark.sql("CREATE DATABASE df_v2_jdbc_catalog");
    spark.sql("CREATE TABLE df_v2_jdbc_catalog.src (id bigint, name string) USING parquet");
    spark.conf().set("spark.sql.catalog.derbycat", "org.apache.spark.sql.execution.datasources.v2.jdbc.JDBCTableCatalog");
    spark.conf().set("spark.sql.catalog.derbycat.url", "jdbc:derby:memory:colline_v2;create=true");
    spark.sql("CREATE TABLE derbycat.APP.PEOPLE (id bigint, name string)");
    spark.sql("INSERT INTO derbycat.APP.PEOPLE SELECT id, upper(name) FROM df_v2_jdbc_catalog.src");
    spark.sql("INSERT OVERWRITE derbycat.APP.PEOPLE SELECT id, name FROM df_v2_jdbc_catalog.src WHERE id > 0");
    spark.table("df_v2_jdbc_catalog.src").selectExpr("id", "length(name) AS len").writeTo("derbycat.APP.LENS").create();
    spark.sql("CREATE TABLE df_v2_jdbc_catalog.dst USING parquet AS SELECT ID, NAME FROM derbycat.APP.PEOPLE");
  }
}
