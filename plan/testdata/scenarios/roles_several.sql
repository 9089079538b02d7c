-- a column playing several roles keeps every one: a value and a CASE/IF/NVL/COALESCE condition, a value and a join key (join on an expression), a join key and a filter; row-level dependencies once per write, and a filter in one union branch or in a scalar subquery only where it decides rows
DROP DATABASE IF EXISTS roles_several CASCADE;
CREATE DATABASE roles_several;
USE roles_several;
CREATE TABLE orders (id bigint, customer bigint, status string, amount double) USING parquet;
CREATE TABLE customers (id bigint, name string, tier string) USING parquet;
CREATE TABLE value_and_condition (id bigint, status string, amount double, tier string) USING parquet;
INSERT INTO value_and_condition SELECT o.id, CASE WHEN status = 'open' THEN status ELSE 'closed' END, IF(amount > 0, amount, 0D), COALESCE(NVL(tier, status), 'none') FROM orders o JOIN customers c ON o.customer = c.id;
CREATE TABLE value_and_join_key (customer bigint, name string) USING parquet;
INSERT INTO value_and_join_key SELECT o.customer, c.name FROM orders o JOIN customers c ON o.customer + 0 = c.id;
CREATE TABLE join_key_and_filter (id bigint, name string) USING parquet;
INSERT INTO join_key_and_filter SELECT o.id, c.name FROM orders o JOIN customers c ON o.customer = c.id WHERE o.customer > 10 AND o.status = 'open';
CREATE TABLE union_branch_filter (id bigint, amount double) USING parquet;
INSERT INTO union_branch_filter SELECT id, amount FROM orders WHERE status = 'open' UNION ALL SELECT id, 0D FROM customers;
CREATE TABLE subquery_filter (id bigint, biggest double) USING parquet;
INSERT INTO subquery_filter SELECT c.id, (SELECT max(o.amount) FROM orders o WHERE o.customer = c.id AND o.status = 'open') FROM customers c WHERE c.tier = 'gold';
