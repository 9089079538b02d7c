-- a view over a view: each view is a dataset
DROP DATABASE IF EXISTS view_nested CASCADE;
CREATE DATABASE view_nested;
USE view_nested;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, x double) USING parquet;
CREATE VIEW v1 AS SELECT id, amount FROM src;
CREATE VIEW v2 AS SELECT id, amount + 1 AS x FROM v1;
INSERT INTO dst SELECT id, x FROM v2;
