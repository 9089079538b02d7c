-- inline over an array of structs: every struct field reads the array
DROP DATABASE IF EXISTS generate_inline CASCADE;
CREATE DATABASE generate_inline;
USE generate_inline;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, sku string, qty int) USING parquet;
INSERT INTO dst SELECT id, sku, qty FROM src LATERAL VIEW inline(items) t AS sku, qty;
