-- Table: customers per e-mail domain (lower-cased).
SELECT lower(split_part(email, '@', 2)) AS domain,
       COUNT(*) AS customers
FROM customers
WHERE email IS NOT NULL
GROUP BY lower(split_part(email, '@', 2))
