-- CREATE OR REPLACE VIEW with a column list names the view columns
DROP DATABASE IF EXISTS view_column_list CASCADE;
CREATE DATABASE view_column_list;
USE view_column_list;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE OR REPLACE VIEW v (key, label) AS SELECT id, name FROM src;
