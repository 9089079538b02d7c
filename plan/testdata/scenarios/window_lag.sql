-- lag over an order only
DROP DATABASE IF EXISTS window_lag CASCADE;
CREATE DATABASE window_lag;
USE window_lag;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, prev double) USING parquet;
INSERT INTO dst SELECT id, lag(amount, 1) OVER (ORDER BY ts) FROM src;
