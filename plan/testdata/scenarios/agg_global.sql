-- an aggregate without GROUP BY
DROP DATABASE IF EXISTS agg_global CASCADE;
CREATE DATABASE agg_global;
USE agg_global;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (mx double, mn bigint) USING parquet;
INSERT INTO dst SELECT max(amount), min(id) FROM src;
