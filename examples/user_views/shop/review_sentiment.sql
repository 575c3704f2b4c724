-- Reviews tile: reviews per sentiment, and how many mention a refund.
SELECT CASE WHEN rating >= 4 THEN 'positive' WHEN rating = 3 THEN 'neutral' ELSE 'negative' END AS sentiment,
       COUNT(*) AS reviews,
       SUM(CASE WHEN lower(title) LIKE '%refund%' THEN 1 ELSE 0 END) AS mention_refund
FROM reviews
GROUP BY 1
