-- Review campaign: customers with a delivered order who never wrote a review.
SELECT DISTINCT o.customer_id
FROM orders o
LEFT ANTI JOIN reviews r ON r.customer_id = o.customer_id
WHERE o.status = 'delivered'
