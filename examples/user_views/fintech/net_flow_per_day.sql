-- Treasury: money in and out per posting day.
SELECT posted_date, SUM(inflow) AS inflow, SUM(outflow) AS outflow, SUM(inflow) - SUM(outflow) AS net
FROM (
    SELECT posted_date, amount AS inflow, 0 AS outflow
    FROM transactions
    WHERE status = 'posted' AND txn_type IN ('transfer_in', 'refund', 'interest')
    UNION ALL
    SELECT posted_date, 0 AS inflow, amount AS outflow
    FROM transactions
    WHERE status = 'posted' AND txn_type IN ('purchase', 'atm', 'fee', 'transfer_out')
) flows
GROUP BY posted_date
