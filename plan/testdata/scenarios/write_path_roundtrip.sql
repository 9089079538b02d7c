-- a path written, then read by path into a table: the path dataset links both
DROP DATABASE IF EXISTS write_path_roundtrip CASCADE;
CREATE DATABASE write_path_roundtrip;
USE write_path_roundtrip;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
INSERT OVERWRITE DIRECTORY '/tmp/colline-capture/out/write_path_roundtrip' USING parquet SELECT id, amount FROM src;
CREATE TABLE dst USING parquet AS SELECT id, amount FROM parquet.`/tmp/colline-capture/out/write_path_roundtrip`;
