-- a persistent view is a dataset: its columns are fed by the base, readers read the view
DROP DATABASE IF EXISTS view_persistent CASCADE;
CREATE DATABASE view_persistent;
USE view_persistent;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, doubled double) USING parquet;
CREATE VIEW v AS SELECT id, amount * 2 AS doubled FROM src WHERE kind = 'buy';
INSERT INTO dst SELECT id, doubled FROM v WHERE doubled > 1;
