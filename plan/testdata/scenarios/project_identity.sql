-- columns copied as they are: DIRECT/IDENTITY, one edge per column
DROP DATABASE IF EXISTS project_identity CASCADE;
CREATE DATABASE project_identity;
USE project_identity;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, name string) USING parquet;
INSERT INTO dst SELECT id, name FROM src;
