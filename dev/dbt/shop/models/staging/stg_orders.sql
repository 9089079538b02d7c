-- a filter and a renamed, transformed column
select
    order_id,
    customer_id,
    round(amount_gross / 1.2, 2) as amount,
    status,
    order_date
from {{ source('lake', 'orders') }}
where status <> 'cancelled'
