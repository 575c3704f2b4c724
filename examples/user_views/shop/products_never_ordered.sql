-- Merchandising list: active products nobody has ordered yet.
SELECT p.product_id, p.sku, p.name
FROM products p
WHERE p.is_active
  AND NOT EXISTS (SELECT 1 FROM order_items oi WHERE oi.product_id = p.product_id)
