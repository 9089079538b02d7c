-- LATERAL VIEW explode: one row per array element.
INSERT OVERWRITE TABLE hshop.order_tags
SELECT o.order_id, t.tag FROM hshop.orders o LATERAL VIEW explode(o.tags) t AS tag;
