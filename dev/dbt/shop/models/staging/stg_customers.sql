select
    customer_id,
    name as customer_name,
    lower(country) as country_code
from {{ source('lake', 'customers') }}
