-- posexplode: both generated columns read the array
DROP DATABASE IF EXISTS generate_posexplode CASCADE;
CREATE DATABASE generate_posexplode;
USE generate_posexplode;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, pos int, tag string) USING parquet;
INSERT INTO dst SELECT id, pos, tag FROM src LATERAL VIEW posexplode(tags) t AS pos, tag;
