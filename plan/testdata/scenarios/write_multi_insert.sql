-- FROM src INSERT INTO a ... INSERT INTO b ...: one write per target
DROP DATABASE IF EXISTS write_multi_insert CASCADE;
CREATE DATABASE write_multi_insert;
USE write_multi_insert;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE a (id bigint) USING parquet;
CREATE TABLE b (name string) USING parquet;
FROM src INSERT INTO a SELECT id WHERE kind = 'buy' INSERT INTO b SELECT name WHERE kind = 'sell';
