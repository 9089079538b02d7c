-- a windowed sum reads its argument (AGGREGATION) and the spec (WINDOW)
DROP DATABASE IF EXISTS window_sum CASCADE;
CREATE DATABASE window_sum;
USE window_sum;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, running double) USING parquet;
INSERT INTO dst SELECT id, sum(amount) OVER (PARTITION BY kind ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM src;
