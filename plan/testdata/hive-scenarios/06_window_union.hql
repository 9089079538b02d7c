-- A window function, then a UNION ALL into an append.
INSERT OVERWRITE TABLE hshop.ranked
SELECT order_id, rank() OVER (PARTITION BY customer_id ORDER BY amount DESC),
       sum(amount) OVER (PARTITION BY customer_id ORDER BY order_id)
FROM hshop.orders;
INSERT INTO TABLE hshop.all_ids
SELECT order_id, 'orders' FROM hshop.orders
UNION ALL
SELECT customer_id, country FROM hshop.customers;
