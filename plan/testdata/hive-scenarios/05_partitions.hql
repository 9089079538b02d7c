-- A static partition, then dynamic partitions.
INSERT OVERWRITE TABLE hshop.orders_by_day PARTITION (day = '2026-01-01')
SELECT order_id, amount FROM hshop.orders;
SET hive.exec.dynamic.partition.mode=nonstrict;
INSERT OVERWRITE TABLE hshop.orders_by_status PARTITION (status)
SELECT order_id, amount, status FROM hshop.orders;
