-- Marketing table: orders per coupon code, 'none' when no coupon was used.
SELECT COALESCE(coupon_code, 'none') AS coupon,
       COUNT(*) AS orders,
       SUM(shipping_fee) AS shipping_fees
FROM orders
GROUP BY COALESCE(coupon_code, 'none')
