-- The order book of the RPAI paper's finance workload (RPAI §2.2, §5.1.1; the DBToaster finance
-- benchmark it cites) and the relation r(a, b) of its Example 2.1.
--
-- bids/asks: (t, id, broker_id, volume, price), one row per open order, keyed by the order id.
-- DBToaster declares volume and price FLOAT; here both are BIGINT on purpose:
--   volume — shares are whole numbers, and the RPAI tree's keys are running sums of volumes
--     (VWAP's rhs_sum). Integer keys stay exact under every insert/delete/shift; float keys drift
--     (a + b - b != a), so a key could no longer be found or compare equal to the recomputed sum.
--   price — in integer ticks (e.g. cents). Prices are compared (b2.price <= b.price) and multiplied
--     by volume in SUM(price * volume); integers keep both exact and order-preserving, so the
--     maintained result can be compared with recomputation for equality, not within a tolerance.
-- t is the event time as BIGINT (a sequence number of the trace, as in DBToaster's adaptor).
create table bids (
  t bigint not null,
  id bigint not null,
  broker_id int not null,
  volume bigint not null,
  price bigint not null,
  primary key (id)
);

create table asks (
  t bigint not null,
  id bigint not null,
  broker_id int not null,
  volume bigint not null,
  price bigint not null,
  primary key (id)
);

-- Example 2.1's R(A, B) has no key in the paper. Our base tables have set semantics and need a
-- primary key, so each tuple carries a surrogate id; the queries never read it, so two tuples with
-- equal (a, b) remain two tuples, exactly the bag the paper's R is.
create table r (
  id bigint not null,
  a bigint not null,
  b bigint not null,
  primary key (id)
);
