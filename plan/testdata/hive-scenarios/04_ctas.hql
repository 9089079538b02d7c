-- CTAS with CASE WHEN, a hash and a cast.
CREATE TABLE hshop.order_summary AS
SELECT o.customer_id,
       CASE WHEN o.amount > 6 THEN 'big' ELSE 'small' END AS size,
       md5(c.email) AS email_hash,
       CAST(o.amount AS DECIMAL(10,2)) AS amount
FROM hshop.orders o LEFT OUTER JOIN hshop.customers c ON o.customer_id = c.customer_id;
