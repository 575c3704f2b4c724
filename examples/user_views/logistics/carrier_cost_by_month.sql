-- Finance: estimated freight cost per carrier and month (weight times the carrier's rate).
SELECT c.name, date_format(s.ship_date, 'yyyy-MM') AS month,
       ROUND(SUM(p.weight_kg * c.cost_per_kg), 2) AS est_cost,
       COUNT(p.parcel_id) AS parcels
FROM parcels p
JOIN shipments s ON s.shipment_id = p.shipment_id
JOIN routes r ON r.route_id = s.route_id
JOIN carriers c ON c.carrier_id = r.carrier_id
WHERE s.ship_date IS NOT NULL
GROUP BY c.name, date_format(s.ship_date, 'yyyy-MM')
