-- KYC backlog: customers not yet verified whose accounts already transacted.
SELECT c.customer_id, c.full_name, c.kyc_status, c.created_at
FROM customers c
WHERE COALESCE(c.kyc_status, 'unknown') <> 'verified'
  AND c.customer_id IN (
      SELECT a.customer_id
      FROM accounts a
      JOIN transactions t ON t.account_id = a.account_id
  )
