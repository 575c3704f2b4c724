-- Bar chart: active products per price band with their average price.
SELECT CASE WHEN list_price < 20 THEN 'budget'
            WHEN list_price < 100 THEN 'mid'
            ELSE 'premium' END AS band,
       COUNT(*) AS products,
       AVG(list_price) AS avg_price
FROM products
WHERE is_active = true
GROUP BY 1
