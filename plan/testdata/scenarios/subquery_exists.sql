-- correlated EXISTS
DROP DATABASE IF EXISTS subquery_exists CASCADE;
CREATE DATABASE subquery_exists;
USE subquery_exists;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dim (id bigint, country string, segment string) USING parquet;
CREATE TABLE dst (id bigint, name string) USING parquet;
INSERT INTO dst SELECT id, name FROM src s WHERE EXISTS (SELECT 1 FROM dim d WHERE d.id = s.id);
