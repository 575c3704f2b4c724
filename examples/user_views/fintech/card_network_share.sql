-- Pie chart: share of issued cards per network.
SELECT network, COUNT(*) AS cards,
       ROUND(COUNT(*) * 100.0 / SUM(COUNT(*)) OVER (), 1) AS pct
FROM cards
GROUP BY network
