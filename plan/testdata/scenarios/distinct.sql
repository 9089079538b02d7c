-- SELECT DISTINCT
DROP DATABASE IF EXISTS distinct CASCADE;
CREATE DATABASE distinct;
USE distinct;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (kind string) USING parquet;
INSERT INTO dst SELECT DISTINCT kind FROM src;
