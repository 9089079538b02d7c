-- A job that never writes (a data-quality check in Apache Griffin's style): a chain of temporary
-- views, an aggregate and a collect. Run with spark.colline.publishReads=true (e2e/reads_test.go).
CREATE DATABASE IF NOT EXISTS dq;
CREATE TABLE dq.orders (order_id bigint, customer_id bigint, amount decimal(10,2), status string) USING parquet;
CREATE TABLE dq.customers (customer_id bigint, country string) USING parquet;
CREATE TEMPORARY VIEW paid AS SELECT order_id, customer_id, amount FROM dq.orders WHERE status = 'paid';
CREATE TEMPORARY VIEW paid_by_country AS SELECT c.country, p.amount FROM paid p JOIN dq.customers c ON p.customer_id = c.customer_id;
CREATE TEMPORARY VIEW country_check AS SELECT country, sum(amount) AS total, count(*) AS orders FROM paid_by_country GROUP BY country;
SELECT country, total, orders FROM country_check WHERE orders > 0;
