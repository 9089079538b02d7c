-- WHERE columns are INDIRECT/FILTER on every target column
DROP DATABASE IF EXISTS filter_where CASCADE;
CREATE DATABASE filter_where;
USE filter_where;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, name string) USING parquet;
INSERT INTO dst SELECT id, name FROM src WHERE amount > 10 AND kind = 'buy';
