-- The tables of the Hive scenarios (run first, in one Hive session with the others).
CREATE DATABASE IF NOT EXISTS hshop;
CREATE TABLE hshop.orders (order_id INT, customer_id INT, amount DOUBLE, status STRING, tags ARRAY<STRING>);
CREATE TABLE hshop.customers (customer_id INT, country STRING, email STRING);
INSERT INTO hshop.orders SELECT 1, 10, 5.0, 'paid', array('web', 'promo') UNION ALL SELECT 2, 11, 7.5, 'open', array('store') UNION ALL SELECT 3, 10, 12.0, 'paid', array('web');
INSERT INTO hshop.customers VALUES (10, 'DE', 'a@example.com'), (11, 'FR', 'b@example.com');
CREATE TABLE hshop.country_revenue (country STRING, revenue DOUBLE, orders BIGINT);
CREATE TABLE hshop.order_tags (order_id INT, tag STRING);
CREATE TABLE hshop.paid_orders (order_id INT, amount DOUBLE);
CREATE TABLE hshop.big_orders (order_id INT, status STRING);
CREATE TABLE hshop.orders_by_day (order_id INT, amount DOUBLE) PARTITIONED BY (day STRING);
CREATE TABLE hshop.orders_by_status (order_id INT, amount DOUBLE) PARTITIONED BY (status STRING);
CREATE TABLE hshop.ranked (order_id INT, rnk INT, running DOUBLE);
CREATE TABLE hshop.all_ids (id INT, source STRING);
