-- ALTER VIEW ... AS replaces the view plan
DROP DATABASE IF EXISTS view_alter_as CASCADE;
CREATE DATABASE view_alter_as;
USE view_alter_as;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE VIEW v AS SELECT id FROM src;
ALTER VIEW v AS SELECT id, name FROM src WHERE amount > 0;
