-- a window result used in an outer filter
DROP DATABASE IF EXISTS window_qualify_like CASCADE;
CREATE DATABASE window_qualify_like;
USE window_qualify_like;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, name string) USING parquet;
INSERT INTO dst SELECT id, name FROM (SELECT id, name, rank() OVER (PARTITION BY kind ORDER BY amount DESC) AS r FROM src) t WHERE r = 1;
