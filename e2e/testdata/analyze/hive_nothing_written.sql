-- TestAnalyzeMetastore: every statement here would change the metastore or the warehouse if it
-- ran; analyzed against the metastore, none may. The last three prove it from inside the session.
INSERT OVERWRITE TABLE hv.events SELECT user_id + 100, user_id, array(name), 1.0 FROM hv.users;
TRUNCATE TABLE hv.users;
ALTER TABLE hv.big_spenders RENAME TO hv.big_spenders_renamed;
CREATE TABLE hv.created (a int) STORED AS PARQUET;
CREATE TABLE hv.created_as STORED AS PARQUET AS SELECT * FROM hv.users;
CREATE DATABASE hv_new;
DROP VIEW hv.user_totals;
DROP TABLE hv.daily;
-- not created in the metastore, but kept for this script as its CREATE TABLE declares it: analyzes
INSERT INTO hv.created SELECT 1;
-- not dropped, not renamed: both analyze
INSERT INTO hv.daily PARTITION (dt = 'x') SELECT country, 'y', 1.0 FROM hv.users;
INSERT INTO hv.events SELECT 9, 9, array(name), amount FROM hv.big_spenders;
