-- SELECT * maps every column by position
DROP DATABASE IF EXISTS project_star CASCADE;
CREATE DATABASE project_star;
USE project_star;
CREATE TABLE dim (id bigint, country string, segment string) USING parquet;
CREATE TABLE dst (id bigint, country string, segment string) USING parquet;
INSERT INTO dst SELECT * FROM dim;
