-- NOT EXISTS and NOT IN
DROP DATABASE IF EXISTS subquery_not_exists_not_in CASCADE;
CREATE DATABASE subquery_not_exists_not_in;
USE subquery_not_exists_not_in;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dim (id bigint, country string, segment string) USING parquet;
CREATE TABLE dst (id bigint) USING parquet;
INSERT INTO dst SELECT id FROM src s WHERE NOT EXISTS (SELECT 1 FROM dim d WHERE d.id = s.id) AND kind NOT IN (SELECT segment FROM dim);
