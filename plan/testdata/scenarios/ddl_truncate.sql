-- TRUNCATE TABLE
DROP DATABASE IF EXISTS ddl_truncate CASCADE;
CREATE DATABASE ddl_truncate;
USE ddl_truncate;
CREATE TABLE t (id bigint) USING parquet;
TRUNCATE TABLE t;
