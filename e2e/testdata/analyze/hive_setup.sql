-- TestAnalyzeMetastore: Hive-format tables in the Derby metastore of a local Spark run (dev/spark-sql --work DIR).
CREATE DATABASE hv;
CREATE TABLE hv.events (id bigint, user_id bigint, tags array<string>, amount double) STORED AS PARQUET;
CREATE TABLE hv.users (user_id bigint, name string, country string) ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' STORED AS TEXTFILE;
CREATE TABLE hv.daily (country string, tag string, total double) PARTITIONED BY (dt string) STORED AS PARQUET;
INSERT INTO hv.events VALUES (1, 10, array('a', 'b'), 1.5), (2, 20, array('c'), 2.0), (3, 10, array('a'), 4.0);
INSERT INTO hv.users VALUES (10, 'Ada', 'FR'), (20, 'Linus', 'FI');
