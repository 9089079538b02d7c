-- A multi-insert: one scan, two targets, each with its own filter.
FROM hshop.orders o
INSERT OVERWRITE TABLE hshop.paid_orders SELECT o.order_id, o.amount WHERE o.status = 'paid'
INSERT OVERWRITE TABLE hshop.big_orders SELECT o.order_id, upper(o.status) WHERE o.amount > 6;
