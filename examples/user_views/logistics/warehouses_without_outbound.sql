-- Network: warehouses that are no lane's origin.
SELECT warehouse_id, code, city
FROM warehouses
WHERE warehouse_id NOT IN (SELECT origin_warehouse_id FROM routes)
