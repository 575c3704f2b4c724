-- Header KPI: gross merchandise value and units sold, all time.
SELECT SUM(quantity * unit_price) AS gross_revenue,
       SUM(quantity) AS units_sold
FROM order_items
