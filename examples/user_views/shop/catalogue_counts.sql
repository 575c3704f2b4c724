-- KPI strip: how many customers, orders, products and reviews there are.
SELECT 'customers' AS entity, COUNT(*) AS n FROM customers
UNION ALL
SELECT 'orders', COUNT(*) FROM orders
UNION ALL
SELECT 'products', COUNT(*) FROM products
UNION ALL
SELECT 'reviews', COUNT(*) FROM reviews
