-- Support tool: cleaned-up customer names and e-mails.
SELECT customer_id,
       initcap(trim(first_name)) || ' ' || upper(trim(last_name)) AS display_name,
       lower(trim(email)) AS email,
       coalesce(region_id, -1) AS region_id
FROM customers
