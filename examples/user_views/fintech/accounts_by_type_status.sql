-- Book overview: accounts per type and status, how many have a closing date, the oldest opening.
SELECT account_type, status, COUNT(*) AS accounts, COUNT(closed_on) AS with_close_date,
       MIN(opened_on) AS oldest_opened
FROM accounts
GROUP BY account_type, status
