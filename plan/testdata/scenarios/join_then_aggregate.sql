-- the walking skeleton shape: join, filter, aggregate
DROP DATABASE IF EXISTS join_then_aggregate CASCADE;
CREATE DATABASE join_then_aggregate;
USE join_then_aggregate;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dim (id bigint, country string, segment string) USING parquet;
CREATE TABLE dst (country string, revenue double, orders bigint) USING parquet;
INSERT INTO dst SELECT d.country, sum(s.amount * 1.2), count(s.id) FROM src s JOIN dim d ON s.id = d.id WHERE s.kind = 'buy' GROUP BY d.country;
