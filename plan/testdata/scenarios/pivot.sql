-- PIVOT becomes an Aggregate with conditional aggregates
DROP DATABASE IF EXISTS pivot CASCADE;
CREATE DATABASE pivot;
USE pivot;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, buy double, sell double) USING parquet;
INSERT INTO dst SELECT * FROM (SELECT id, kind, amount FROM src) PIVOT (sum(amount) FOR kind IN ('buy' AS buy, 'sell' AS sell));
