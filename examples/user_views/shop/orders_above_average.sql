-- Table: orders whose shipping fee is above the average shipping fee.
SELECT order_id, shipping_fee
FROM orders
WHERE shipping_fee > (SELECT AVG(shipping_fee) FROM orders)
