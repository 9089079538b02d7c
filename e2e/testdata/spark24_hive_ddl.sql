-- Spark 2.4 on JDK 17: what it can run there beyond the skeleton, writes and DDL (no collecting
-- action): a Hive text table insert (InsertIntoHiveTable), a Hive CTAS, a rename and a drop.
CREATE DATABASE IF NOT EXISTS shop24;
CREATE TABLE shop24.orders (order_id INT, amount DOUBLE, status STRING) STORED AS TEXTFILE;
INSERT INTO shop24.orders VALUES (1, 5.0, 'paid'), (2, 7.5, 'open');
CREATE TABLE shop24.paid (order_id INT, amount DOUBLE) STORED AS TEXTFILE;
INSERT OVERWRITE TABLE shop24.paid SELECT order_id, amount * 2 FROM shop24.orders WHERE status = 'paid';
CREATE TABLE shop24.summary STORED AS TEXTFILE AS SELECT status, sum(amount) AS total FROM shop24.orders GROUP BY status;
ALTER TABLE shop24.summary RENAME TO shop24.summary_old;
DROP TABLE shop24.summary_old;
