-- LATERAL VIEW explode: pass-through columns keep their own source, the generated column reads the array
DROP DATABASE IF EXISTS generate_lateral_view_explode CASCADE;
CREATE DATABASE generate_lateral_view_explode;
USE generate_lateral_view_explode;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, name string, tag string) USING parquet;
INSERT INTO dst SELECT id, name, tag FROM src LATERAL VIEW explode(tags) t AS tag;
