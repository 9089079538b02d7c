-- TABLESAMPLE passes rows through
DROP DATABASE IF EXISTS tablesample CASCADE;
CREATE DATABASE tablesample;
USE tablesample;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint) USING parquet;
INSERT INTO dst SELECT id FROM src TABLESAMPLE (50 PERCENT);
