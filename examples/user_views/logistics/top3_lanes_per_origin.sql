-- Network planning: the three busiest lanes out of each origin warehouse.
WITH lane_volume AS (
    SELECT r.origin_warehouse_id, r.route_id, r.dest_warehouse_id, COUNT(s.shipment_id) AS shipments
    FROM routes r
    JOIN shipments s ON s.route_id = r.route_id
    GROUP BY r.origin_warehouse_id, r.route_id, r.dest_warehouse_id
)
SELECT *
FROM (
    SELECT lv.*, RANK() OVER (PARTITION BY origin_warehouse_id ORDER BY shipments DESC) AS lane_rank
    FROM lane_volume lv
)
WHERE lane_rank <= 3
