-- three children: the positional rule covers all of them
DROP DATABASE IF EXISTS union_three_children CASCADE;
CREATE DATABASE union_three_children;
USE union_three_children;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dim (id bigint, country string, segment string) USING parquet;
CREATE TABLE other (id bigint, tag string) USING parquet;
CREATE TABLE dst (id bigint, label string) USING parquet;
INSERT INTO dst SELECT id, name FROM src UNION ALL SELECT id, country FROM dim UNION ALL SELECT id, tag FROM other;
