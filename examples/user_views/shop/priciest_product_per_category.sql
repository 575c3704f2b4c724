-- Category panel: the most expensive active product in each category.
SELECT category_id,
       max_by(name, list_price) AS priciest_product,
       MAX(list_price) AS top_price
FROM products
WHERE is_active
GROUP BY category_id
