-- Sales: customers with at least 5 shipments, their declared value and first shipment.
SELECT upper(trim(customer_ref)) AS customer, COUNT(*) AS shipments,
       SUM(declared_value) AS declared_value, MIN(created_at) AS first_shipment
FROM shipments
WHERE customer_ref IS NOT NULL
GROUP BY upper(trim(customer_ref))
HAVING COUNT(*) >= 5
