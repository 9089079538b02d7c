-- LIMIT and OFFSET pass rows through
DROP DATABASE IF EXISTS limit_offset CASCADE;
CREATE DATABASE limit_offset;
USE limit_offset;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint) USING parquet;
INSERT INTO dst SELECT id FROM src ORDER BY id LIMIT 10 OFFSET 5;
