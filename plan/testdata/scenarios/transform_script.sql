-- TRANSFORM ... USING cat (ScriptTransformation): every output reads every input
DROP DATABASE IF EXISTS transform_script CASCADE;
CREATE DATABASE transform_script;
USE transform_script;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (a string, b string) USING parquet;
INSERT INTO dst SELECT TRANSFORM (id, name) USING 'cat' AS (a string, b string) FROM src;
