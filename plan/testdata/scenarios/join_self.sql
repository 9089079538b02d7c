-- a self join: both sides are the same dataset
DROP DATABASE IF EXISTS join_self CASCADE;
CREATE DATABASE join_self;
USE join_self;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, parent_name string) USING parquet;
INSERT INTO dst SELECT c.id, p.name FROM src c JOIN src p ON c.amount = p.id;
