-- a non-equi join condition
DROP DATABASE IF EXISTS join_non_equi CASCADE;
CREATE DATABASE join_non_equi;
USE join_non_equi;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dim (id bigint, country string, segment string) USING parquet;
CREATE TABLE dst (id bigint, country string) USING parquet;
INSERT INTO dst SELECT s.id, d.country FROM src s JOIN dim d ON s.id BETWEEN d.id AND d.id + 10 AND s.kind <> d.segment;
