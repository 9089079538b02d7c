-- NATURAL JOIN joins on every common column name
DROP DATABASE IF EXISTS join_natural CASCADE;
CREATE DATABASE join_natural;
USE join_natural;
CREATE TABLE a (id bigint, k string, x double) USING parquet;
CREATE TABLE b (id bigint, k string, y double) USING parquet;
CREATE TABLE dst (id bigint, k string, x double, y double) USING parquet;
INSERT INTO dst SELECT * FROM a NATURAL JOIN b;
