-- three tables
DROP DATABASE IF EXISTS join_three_way CASCADE;
CREATE DATABASE join_three_way;
USE join_three_way;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dim (id bigint, country string, segment string) USING parquet;
CREATE TABLE seg (segment string, label string) USING parquet;
CREATE TABLE dst (name string, country string, label string) USING parquet;
INSERT INTO dst SELECT s.name, d.country, g.label FROM src s JOIN dim d ON s.id = d.id LEFT JOIN seg g ON d.segment = g.segment;
