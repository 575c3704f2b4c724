-- Sales list: accounts that never subscribed.
SELECT a.account_id, a.name, a.industry
FROM accounts a
LEFT JOIN subscriptions s ON s.account_id = a.account_id
WHERE s.subscription_id IS NULL
