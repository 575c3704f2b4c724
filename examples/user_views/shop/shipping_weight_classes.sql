-- Logistics table: units sold per whole-kilogram weight class.
SELECT FLOOR(p.weight_kg) AS weight_class_kg,
       SUM(oi.quantity) AS units
FROM order_items oi
JOIN products p ON p.product_id = oi.product_id
WHERE p.weight_kg IS NOT NULL
GROUP BY FLOOR(p.weight_kg)
