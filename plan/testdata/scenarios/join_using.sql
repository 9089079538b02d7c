-- JOIN USING: the analyzer turns it into a Project over an equi-join
DROP DATABASE IF EXISTS join_using CASCADE;
CREATE DATABASE join_using;
USE join_using;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dim (id bigint, country string, segment string) USING parquet;
CREATE TABLE dst (id bigint, name string, country string) USING parquet;
INSERT INTO dst SELECT id, name, country FROM src JOIN dim USING (id);
