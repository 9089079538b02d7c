-- ORDER BY keys are INDIRECT/SORT
DROP DATABASE IF EXISTS sort_order_by CASCADE;
CREATE DATABASE sort_order_by;
USE sort_order_by;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, name string) USING parquet;
INSERT INTO dst SELECT id, name FROM src ORDER BY amount DESC, name;
