-- INSERT OVERWRITE LOCAL DIRECTORY ... STORED AS: Hive directory write
DROP DATABASE IF EXISTS write_directory_hive CASCADE;
CREATE DATABASE write_directory_hive;
USE write_directory_hive;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
INSERT OVERWRITE LOCAL DIRECTORY '/tmp/colline-capture/out/write_directory_hive' STORED AS TEXTFILE SELECT id, name FROM src;
