-- join keys are INDIRECT/JOIN on every target column
DROP DATABASE IF EXISTS join_inner CASCADE;
CREATE DATABASE join_inner;
USE join_inner;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dim (id bigint, country string, segment string) USING parquet;
CREATE TABLE dst (id bigint, name string, country string) USING parquet;
INSERT INTO dst SELECT s.id, s.name, d.country FROM src s JOIN dim d ON s.id = d.id;
