-- JDBC through SQL: CTAS into a jdbc table, INSERT INTO it (InsertIntoDataSourceCommand), read it back
DROP DATABASE IF EXISTS write_jdbc_sql CASCADE;
CREATE DATABASE write_jdbc_sql;
USE write_jdbc_sql;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE jt USING jdbc OPTIONS (url 'jdbc:derby:memory:colline_write_jdbc_sql;create=true;user=app;password=s3cret', dbtable 'JT') AS SELECT id, name FROM src;
INSERT INTO jt SELECT id, kind FROM src;
CREATE TABLE dst USING parquet AS SELECT id, name FROM jt;
