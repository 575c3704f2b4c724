-- Each promotion's redemptions inside its validity window and the discount given.
SELECT p.promo_code, p.discount_pct,
       COUNT(t.trip_id) AS redemptions,
       SUM(LEAST(t.fare * p.discount_pct / 100, COALESCE(p.max_discount, 999))) AS discount_given
FROM promotions p
LEFT JOIN trips t
  ON t.promo_code = p.promo_code
 AND t.status = 'completed'
 AND CAST(t.requested_at AS DATE) BETWEEN p.valid_from AND p.valid_to
GROUP BY p.promo_code, p.discount_pct
