-- TestAnalyzeMetastore: HiveQL jobs, run by Spark (events captured) and then analyzed against the
-- metastore the run left: both must give the same lineage.
SET hive.exec.dynamic.partition.mode=nonstrict;
INSERT OVERWRITE TABLE hv.daily PARTITION (dt = '2026-01-01')
SELECT u.country, t.tag, sum(e.amount)
FROM hv.events e LATERAL VIEW explode(e.tags) t AS tag
JOIN hv.users u ON e.user_id = u.user_id
GROUP BY u.country, t.tag;
CREATE TABLE hv.big_spenders STORED AS ORC AS
SELECT u.name, e.amount FROM hv.events e JOIN hv.users u ON e.user_id = u.user_id WHERE e.amount > 1;
CREATE VIEW hv.user_totals AS SELECT user_id, sum(amount) AS total FROM hv.events GROUP BY user_id;
INSERT INTO TABLE hv.daily PARTITION (dt)
SELECT 'XX', 'all', total, '2026-01-02' FROM hv.user_totals;
