-- HAVING filters after aggregation: FILTER from the aggregated source
DROP DATABASE IF EXISTS filter_having CASCADE;
CREATE DATABASE filter_having;
USE filter_having;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (kind string, total double) USING parquet;
INSERT INTO dst SELECT kind, sum(amount) FROM src GROUP BY kind HAVING sum(amount) > 100;
