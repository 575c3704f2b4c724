-- Conversion tile: accounts whose trial was followed by a paid subscription.
SELECT COUNT(DISTINCT t.account_id) AS converted_accounts
FROM subscriptions t
JOIN subscriptions p
  ON p.account_id = t.account_id
 AND p.status = 'active'
 AND p.started_on >= t.started_on
WHERE t.status = 'trial'
