-- New sites commissioned per month and type.
SELECT date_trunc('MONTH', commissioned_on) AS month, site_type, COUNT(*) AS sites
FROM sites
WHERE commissioned_on >= DATE '2023-01-01'
GROUP BY date_trunc('MONTH', commissioned_on), site_type
