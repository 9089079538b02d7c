-- a cast keeps the value: DIRECT/IDENTITY
DROP DATABASE IF EXISTS project_cast CASCADE;
CREATE DATABASE project_cast;
USE project_cast;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id string, amount decimal(20,2)) USING parquet;
INSERT INTO dst SELECT CAST(id AS string), CAST(amount AS decimal(20,2)) FROM src;
