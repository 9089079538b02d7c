-- The walking skeleton: two sources, one aggregate with a join and a filter, one downstream table.
-- Run: COLLINE_CAPTURE_DIR=/tmp/capture dev/spark-sql e2e/testdata/skeleton.sql
CREATE DATABASE shop;

CREATE TABLE shop.orders (order_id bigint, customer_id bigint, amount decimal(10,2), status string) USING parquet;
CREATE TABLE shop.customers (customer_id bigint, name string, country string) USING parquet;

INSERT INTO shop.orders VALUES
  (1, 10, 120.00, 'paid'),
  (2, 10, 35.50, 'paid'),
  (3, 20, 99.99, 'cancelled'),
  (4, 30, 250.00, 'paid'),
  (5, 20, 80.00, 'paid');
INSERT INTO shop.customers VALUES
  (10, 'Ada', 'FR'),
  (20, 'Linus', 'FI'),
  (30, 'Grace', 'US');

CREATE TABLE shop.country_revenue (country string, revenue decimal(20,2), orders bigint) USING parquet;
INSERT INTO shop.country_revenue
SELECT c.country, sum(o.amount * 1.2), count(o.order_id)
FROM shop.orders o JOIN shop.customers c ON o.customer_id = c.customer_id
WHERE o.status = 'paid'
GROUP BY c.country;

CREATE TABLE shop.top_countries (country string, revenue decimal(20,2)) USING parquet;
INSERT INTO shop.top_countries SELECT country, revenue FROM shop.country_revenue WHERE revenue > 100;

SELECT * FROM shop.top_countries ORDER BY country;
