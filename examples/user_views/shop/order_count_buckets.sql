-- Histogram: customers by number of orders (1, 2-3, 4+).
SELECT CASE WHEN n = 1 THEN '1'
            WHEN n <= 3 THEN '2-3'
            ELSE '4+' END AS bucket,
       COUNT(*) AS customers
FROM (SELECT customer_id, COUNT(*) AS n FROM orders GROUP BY customer_id) t
GROUP BY CASE WHEN n = 1 THEN '1' WHEN n <= 3 THEN '2-3' ELSE '4+' END
