-- Network: outbound and inbound lanes per warehouse.
SELECT warehouse_id, SUM(outbound) AS outbound_lanes, SUM(inbound) AS inbound_lanes
FROM (
    SELECT origin_warehouse_id AS warehouse_id, 1 AS outbound, 0 AS inbound FROM routes
    UNION ALL
    SELECT dest_warehouse_id, 0, 1 FROM routes
) x
GROUP BY warehouse_id
