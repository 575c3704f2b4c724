-- Pivot: accounts per industry and country with subtotals.
SELECT industry, country, COUNT(*) AS accounts
FROM accounts
GROUP BY ROLLUP (industry, country)
