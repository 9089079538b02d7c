-- FULL OUTER JOIN USING: the key is coalesce(left, right)
DROP DATABASE IF EXISTS join_full_using CASCADE;
CREATE DATABASE join_full_using;
USE join_full_using;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dim (id bigint, country string, segment string) USING parquet;
CREATE TABLE dst (id bigint, name string, country string) USING parquet;
INSERT INTO dst SELECT id, name, country FROM src FULL OUTER JOIN dim USING (id);
