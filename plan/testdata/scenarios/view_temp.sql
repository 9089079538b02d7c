-- a temporary view is collapsed: no dataset, no write; readers see its base table
DROP DATABASE IF EXISTS view_temp CASCADE;
CREATE DATABASE view_temp;
USE view_temp;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, doubled double) USING parquet;
CREATE OR REPLACE TEMPORARY VIEW view_temp_tv AS SELECT id, amount * 2 AS doubled FROM src WHERE kind = 'buy';
INSERT INTO dst SELECT id, doubled FROM view_temp_tv;
