-- json_tuple is a generator over a string column
DROP DATABASE IF EXISTS generate_json_tuple CASCADE;
CREATE DATABASE generate_json_tuple;
USE generate_json_tuple;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, a string, b string) USING parquet;
INSERT INTO dst SELECT id, a, b FROM src LATERAL VIEW json_tuple(js, 'a', 'b') t AS a, b;
