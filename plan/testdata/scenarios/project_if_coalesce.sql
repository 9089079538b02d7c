-- IF condition is CONDITIONAL; coalesce/nvl arguments are values (TRANSFORMATION)
DROP DATABASE IF EXISTS project_if_coalesce CASCADE;
CREATE DATABASE project_if_coalesce;
USE project_if_coalesce;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (label string, fallback string) USING parquet;
INSERT INTO dst SELECT IF(amount > 0, name, kind), coalesce(name, kind, 'none') FROM src;
