-- TPC-H Q17 with other substitution parameters (BRAND = Brand#44, CONTAINER = WRAP CAN): the
-- specification's validation pair (Brand#23, MED BOX, ../q17.sql) names no part that has a
-- lineitem at SF 0.01, so its result is NULL on every stream and a comparison of it cannot fail.
-- Brand#44 / WRAP CAN is the pair with the most lineitems below the 0.2 * avg(l_quantity)
-- threshold at SF 0.01 (20); the query text is otherwise the specification's.
select
  sum(l_extendedprice) / 7.0 as avg_yearly
from lineitem, part
where p_partkey = l_partkey
  and p_brand = 'Brand#44'
  and p_container = 'WRAP CAN'
  and l_quantity < (
    select 0.2 * avg(l_quantity)
    from lineitem
    where l_partkey = p_partkey
  )
