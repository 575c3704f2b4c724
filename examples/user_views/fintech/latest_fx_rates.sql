-- FX board: each currency's latest rate and its change on the rate before.
SELECT currency, rate_date, rate_to_eur, rate_to_eur - prev_rate AS change
FROM (
    SELECT currency, rate_date, rate_to_eur,
           LAG(rate_to_eur) OVER (PARTITION BY currency ORDER BY rate_date) AS prev_rate,
           ROW_NUMBER() OVER (PARTITION BY currency ORDER BY rate_date DESC) AS rn
    FROM fx_rates
) r
WHERE rn = 1
