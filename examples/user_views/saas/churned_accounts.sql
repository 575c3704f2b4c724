-- Churn list: accounts that had a subscription but have no active one now.
SELECT a.account_id, a.name
FROM accounts a
WHERE EXISTS (SELECT 1 FROM subscriptions s WHERE s.account_id = a.account_id)
  AND NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.account_id = a.account_id AND s.status = 'active')
