-- Alert tile: brands whose average rating is below 3.
SELECT p.brand, AVG(r.rating) AS avg_rating, COUNT(*) AS reviews
FROM reviews r
JOIN products p ON p.product_id = r.product_id
WHERE p.brand IS NOT NULL
GROUP BY p.brand
HAVING AVG(r.rating) < 3
