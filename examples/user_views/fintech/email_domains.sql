-- Marketing: customers per email domain.
SELECT lower(substring_index(email, '@', -1)) AS domain, COUNT(*) AS customers
FROM customers
WHERE email IS NOT NULL AND email LIKE '%@%'
GROUP BY lower(substring_index(email, '@', -1))
