-- a temp view over a persistent view: the temp view collapses, the persistent view stays
DROP DATABASE IF EXISTS view_temp_over_persistent CASCADE;
CREATE DATABASE view_temp_over_persistent;
USE view_temp_over_persistent;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, doubled double) USING parquet;
CREATE VIEW v AS SELECT id, amount * 2 AS doubled FROM src;
CREATE OR REPLACE TEMPORARY VIEW view_top_tv AS SELECT id, doubled FROM v WHERE id > 0;
INSERT INTO dst SELECT * FROM view_top_tv;
