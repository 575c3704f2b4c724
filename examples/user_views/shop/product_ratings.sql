-- Product page widget: average rating for products with at least three reviews.
SELECT product_id,
       ROUND(AVG(rating), 2) AS avg_rating,
       COUNT(*) AS reviews
FROM reviews
GROUP BY product_id
HAVING COUNT(*) >= 3
