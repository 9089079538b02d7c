-- The Spark half of the dbt example (dev/dbt/capture, the e2e test TestSparkToDBT): Spark writes
-- two parquet tables, lake.orders and lake.customers, in its warehouse (dev/spark-sql --work DIR:
-- DIR/warehouse/lake.db/<table>); the dbt project dev/dbt/shop reads the same files with DuckDB.
-- colline's listener names them lake.orders and lake.customers (spark_catalog), as
-- openlineage-spark's symlinks facet does; dbt-ol names them by their DuckDB identity
-- (shop.lake.orders): joining the two is an alias of the accept side (docs/openlineage.md). The
-- tables are managed ones, created and then filled by INSERT: openlineage-spark 1.53.0 gives an
-- external table (LOCATION) no symlink, and its path would be a node apart from the table.
DROP DATABASE IF EXISTS lake CASCADE;
CREATE DATABASE lake;
USE lake;
CREATE TABLE raw_orders (order_id bigint, customer_id bigint, amount double, status string, ordered_at timestamp) USING csv OPTIONS (header 'true');
INSERT INTO raw_orders VALUES
  (1, 10, 25.0, 'shipped', TIMESTAMP '2026-11-01 10:00:00'),
  (2, 10, 40.0, 'shipped', TIMESTAMP '2026-11-02 11:00:00'),
  (3, 11, 12.5, 'cancelled', TIMESTAMP '2026-11-02 12:00:00'),
  (4, 12, 300.0, 'shipped', TIMESTAMP '2026-11-03 09:30:00'),
  (5, 13, 75.0, 'returned', TIMESTAMP '2026-11-04 16:45:00');
CREATE TABLE raw_customers (customer_id bigint, name string, country string) USING csv OPTIONS (header 'true');
INSERT INTO raw_customers VALUES (10, 'Ada', 'FR'), (11, 'Bo', 'SE'), (12, 'Cy', 'FR'), (13, 'Di', 'DE');
CREATE TABLE orders (order_id bigint, customer_id bigint, amount_gross double, status string, order_date date) USING parquet;
INSERT OVERWRITE TABLE orders
  SELECT order_id, customer_id, amount * 1.2 AS amount_gross, status, CAST(ordered_at AS date) AS order_date
  FROM raw_orders;
CREATE TABLE customers (customer_id bigint, name string, country string) USING parquet;
INSERT OVERWRITE TABLE customers SELECT customer_id, upper(name) AS name, country FROM raw_customers;
