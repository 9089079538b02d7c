-- LATERAL VIEW OUTER explode
DROP DATABASE IF EXISTS generate_outer CASCADE;
CREATE DATABASE generate_outer;
USE generate_outer;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (name string, tag string) USING parquet;
INSERT INTO dst SELECT name, tag FROM src LATERAL VIEW OUTER explode(tags) t AS tag;
