-- aliases create new exprIds; the edge still goes to the source column
DROP DATABASE IF EXISTS project_rename CASCADE;
CREATE DATABASE project_rename;
USE project_rename;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (key bigint, label string) USING parquet;
INSERT INTO dst SELECT id AS key, name AS label FROM src;
