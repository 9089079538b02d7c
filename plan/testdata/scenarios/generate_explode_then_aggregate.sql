-- explode, then group by the generated column
DROP DATABASE IF EXISTS generate_explode_then_aggregate CASCADE;
CREATE DATABASE generate_explode_then_aggregate;
USE generate_explode_then_aggregate;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (tag string, n bigint, total double) USING parquet;
INSERT INTO dst SELECT tag, count(*), sum(amount) FROM src LATERAL VIEW explode(tags) t AS tag GROUP BY tag;
