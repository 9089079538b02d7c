-- CUBE
DROP DATABASE IF EXISTS expand_cube CASCADE;
CREATE DATABASE expand_cube;
USE expand_cube;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (kind string, name string, n bigint) USING parquet;
INSERT INTO dst SELECT kind, name, count(id) FROM src GROUP BY CUBE (kind, name);
