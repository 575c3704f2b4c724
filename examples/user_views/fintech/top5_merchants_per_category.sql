-- Leaderboard: the five merchants with the most posted spend in each category.
SELECT category, merchant_name, spend, rn
FROM (
    SELECT m.category, m.name AS merchant_name, SUM(t.amount) AS spend,
           ROW_NUMBER() OVER (PARTITION BY m.category ORDER BY SUM(t.amount) DESC, m.merchant_id) AS rn
    FROM transactions t
    JOIN merchants m ON t.merchant_id = m.merchant_id
    WHERE t.status = 'posted' AND t.txn_type = 'purchase'
    GROUP BY m.category, m.name, m.merchant_id
) ranked
WHERE rn <= 5
