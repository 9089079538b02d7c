-- explode in the SELECT list
DROP DATABASE IF EXISTS generate_explode_in_select CASCADE;
CREATE DATABASE generate_explode_in_select;
USE generate_explode_in_select;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, tag string) USING parquet;
INSERT INTO dst SELECT id, explode(tags) AS tag FROM src;
