-- Filter dropdown: the distinct countries of accounts.
SELECT DISTINCT country
FROM accounts
WHERE country IS NOT NULL
