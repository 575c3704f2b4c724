-- Per-category panel: the three best-selling products of each category.
SELECT category_id, product_id, units
FROM (
    SELECT p.category_id, p.product_id, SUM(oi.quantity) AS units,
           ROW_NUMBER() OVER (PARTITION BY p.category_id ORDER BY SUM(oi.quantity) DESC, p.product_id) AS rn
    FROM order_items oi
    JOIN products p ON p.product_id = oi.product_id
    GROUP BY p.category_id, p.product_id
) ranked
WHERE rn <= 3
