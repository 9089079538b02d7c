-- Spark Connect: SQL jobs (writes, a CTAS over a temporary view, a read-only job). dev/capture runs
-- them in classic Spark, dev/capture-connect sends the same statements through a Spark Connect
-- server with the listener (plan/testdata/connect/); TestSparkConnectGoldens compares the two
-- event by event.
-- conf: spark.colline.publishReads=true
DROP DATABASE IF EXISTS connect_sql CASCADE;
CREATE DATABASE connect_sql;
CREATE TABLE connect_sql.orders (order_id INT, customer_id INT, amount DOUBLE, status STRING) USING parquet;
CREATE TABLE connect_sql.customers (customer_id INT, country STRING) USING parquet;
INSERT INTO connect_sql.orders VALUES (1, 10, 12.5, 'paid'), (2, 11, 30.0, 'paid'), (3, 10, 7.0, 'open');
INSERT INTO connect_sql.customers VALUES (10, 'FR'), (11, 'DE');
CREATE TEMPORARY VIEW paid AS SELECT order_id, customer_id, amount FROM connect_sql.orders WHERE status = 'paid';
CREATE TABLE connect_sql.revenue USING parquet AS
SELECT c.country, sum(p.amount) AS revenue, count(p.order_id) AS orders
FROM paid p JOIN connect_sql.customers c ON p.customer_id = c.customer_id
GROUP BY c.country;
INSERT INTO connect_sql.revenue SELECT 'ALL', sum(amount), count(order_id) FROM paid;
SELECT country, revenue FROM connect_sql.revenue WHERE revenue > 10;
