-- explode of a map gives key and value
DROP DATABASE IF EXISTS generate_explode_map CASCADE;
CREATE DATABASE generate_explode_map;
USE generate_explode_map;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, k string, v string) USING parquet;
INSERT INTO dst SELECT id, k, v FROM src LATERAL VIEW explode(props) t AS k, v;
