-- row_number(): partition and order keys are INDIRECT/WINDOW; passthrough columns stay IDENTITY
DROP DATABASE IF EXISTS window_row_number CASCADE;
CREATE DATABASE window_row_number;
USE window_row_number;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, rn int) USING parquet;
INSERT INTO dst SELECT id, row_number() OVER (PARTITION BY kind ORDER BY ts) FROM src;
