-- Card ops: unblocked cards expiring in the quarter after June 2024, with their owner.
SELECT k.card_id, k.network, k.last4, k.expires_on, a.account_id, c.full_name,
       datediff(k.expires_on, DATE '2024-06-30') AS days_left
FROM cards k
JOIN accounts a ON a.account_id = k.account_id
LEFT JOIN customers c ON c.customer_id = a.customer_id
WHERE NOT k.is_blocked
  AND k.expires_on BETWEEN DATE '2024-06-30' AND DATE '2024-09-30'
