-- Trips that used a promo code missing from the promotions table.
SELECT promo_code, COUNT(*) AS trips, MIN(requested_at) AS first_used
FROM trips
WHERE promo_code IS NOT NULL
  AND promo_code NOT IN (SELECT promo_code FROM promotions)
GROUP BY promo_code
