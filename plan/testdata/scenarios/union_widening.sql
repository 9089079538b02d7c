-- type widening casts a child: still IDENTITY for both children
DROP DATABASE IF EXISTS union_widening CASCADE;
CREATE DATABASE union_widening;
USE union_widening;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE small (n int, d decimal(5,2)) USING parquet;
CREATE TABLE dst (n bigint, d double) USING parquet;
INSERT INTO dst SELECT n, d FROM small UNION ALL SELECT id, amount FROM src;
