-- a job that never writes (a data-quality or reporting check): chained temporary views, an aggregate and a collect, published because the session has spark.colline.publishReads=true
-- conf: spark.colline.publishReads=true
DROP DATABASE IF EXISTS read_only_chain CASCADE;
CREATE DATABASE read_only_chain;
USE read_only_chain;
CREATE TABLE orders (id bigint, customer bigint, status string, amount double) USING parquet;
CREATE TABLE customers (id bigint, country string) USING parquet;
CREATE OR REPLACE TEMPORARY VIEW paid AS SELECT id, customer, amount FROM orders WHERE status = 'paid';
CREATE OR REPLACE TEMPORARY VIEW paid_by_country AS SELECT c.country, p.amount FROM paid p JOIN customers c ON p.customer = c.id;
CREATE OR REPLACE TEMPORARY VIEW country_totals AS SELECT country, sum(amount) AS total, count(*) AS n FROM paid_by_country GROUP BY country;
SELECT country, total, n, total IS NULL AS missing FROM country_totals WHERE n > 0 ORDER BY country;
SELECT count(*) FROM orders WHERE amount > 0;
