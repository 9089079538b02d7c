-- DROP TABLE: the table is marked dropped
DROP DATABASE IF EXISTS ddl_drop_table CASCADE;
CREATE DATABASE ddl_drop_table;
USE ddl_drop_table;
CREATE TABLE gone (id bigint) USING parquet;
DROP TABLE gone;
DROP TABLE IF EXISTS never_existed;
