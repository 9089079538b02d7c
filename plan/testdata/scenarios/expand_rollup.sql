-- ROLLUP
DROP DATABASE IF EXISTS expand_rollup CASCADE;
CREATE DATABASE expand_rollup;
USE expand_rollup;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (kind string, name string, total double) USING parquet;
INSERT INTO dst SELECT kind, name, sum(amount) FROM src GROUP BY ROLLUP (kind, name);
