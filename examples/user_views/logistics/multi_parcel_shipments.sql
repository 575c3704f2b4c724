-- Consolidation: shipments with more than one parcel, their total weight and fragile parcels.
SELECT s.shipment_id, s.customer_ref, COUNT(*) AS parcels,
       ROUND(SUM(COALESCE(p.weight_kg, 0)), 3) AS total_kg,
       SUM(CAST(p.is_fragile AS INT)) AS fragile
FROM shipments s
JOIN parcels p ON p.shipment_id = s.shipment_id
GROUP BY s.shipment_id, s.customer_ref
HAVING COUNT(*) > 1
