-- which rows a filter, join or grouping inside a UNION branch decides: only that branch's (rows from its datasets); a role every branch has decides every row; nested unions, a self-union, a branch of inline rows
DROP DATABASE IF EXISTS union_branch_rows CASCADE;
CREATE DATABASE union_branch_rows;
USE union_branch_rows;
CREATE TABLE orders (id bigint, customer bigint, status string, amount double) USING parquet;
CREATE TABLE refunds (id bigint, customer bigint, status string, amount double) USING parquet;
CREATE TABLE customers (id bigint, name string, tier string) USING parquet;
CREATE TABLE dst (id bigint, amount double) USING parquet;
INSERT INTO dst SELECT o.id, o.amount FROM orders o JOIN customers c ON o.customer = c.id WHERE c.tier = 'gold' UNION ALL SELECT id, -amount FROM refunds;
INSERT INTO dst SELECT id, amount FROM orders WHERE status = 'paid' UNION ALL SELECT id, amount FROM refunds WHERE status = 'paid';
INSERT INTO dst SELECT id, amount FROM orders WHERE status = 'paid' UNION ALL SELECT id, -amount FROM orders WHERE status = 'refunded';
INSERT INTO dst SELECT id, amount FROM orders UNION ALL (SELECT id, amount FROM refunds WHERE amount > 0 UNION ALL SELECT customer, sum(amount) FROM refunds GROUP BY customer);
INSERT INTO dst SELECT * FROM (SELECT id, amount FROM orders UNION ALL SELECT * FROM VALUES (1L, 0D) AS v(id, amount) WHERE id IN (SELECT id FROM customers)) WHERE amount >= 0;
