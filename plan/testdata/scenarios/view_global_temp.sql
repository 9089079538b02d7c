-- a global temporary view is collapsed too
DROP DATABASE IF EXISTS view_global_temp CASCADE;
CREATE DATABASE view_global_temp;
USE view_global_temp;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
DROP VIEW IF EXISTS global_temp.view_global_temp_gv;
CREATE TABLE dst (id bigint, name string) USING parquet;
CREATE GLOBAL TEMPORARY VIEW view_global_temp_gv AS SELECT id, upper(name) AS name FROM src;
INSERT INTO dst SELECT id, name FROM global_temp.view_global_temp_gv;
