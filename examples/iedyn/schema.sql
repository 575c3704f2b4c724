-- The relations of IEDyn's experiments (Idris et al., "Conjunctive Queries with Inequalities Under
-- Updates", PVLDB 11(7) 2018, §6 and Table 1) and the transactions of its §1 fraud query.
--
-- r(a, b, c[, k]), s(d, e, f[, k]), t(g, h, i[, k]): column names are the paper's variables, so a
-- query of Table 1 reads as written. Table 1 gives some relations an equality key k and not others
-- (Q2 and Q5 join r.k = s.k, Q6 joins s.k = t.k); one schema serves all twelve queries, so every
-- relation carries k and a query that has no k on a relation simply does not read it.
-- Types follow §6: "All attributes hold integer values, except for attributes c and i which contain
-- string values."
--
-- id: the paper's relations have no key and its databases are bags (GMRs). Our base tables have set
-- semantics and need a primary key, so each tuple carries a synthetic id the queries never read: two
-- tuples with equal (a, b, c, k) stay two tuples, exactly the bag the paper's R is, and a delete
-- names the one tuple it removes.
create table r (
  id bigint not null,
  a bigint not null,
  b bigint not null,
  c string not null,
  k bigint not null,
  primary key (id)
);

create table s (
  id bigint not null,
  d bigint not null,
  e bigint not null,
  f bigint not null,
  k bigint not null,
  primary key (id)
);

create table t (
  id bigint not null,
  g bigint not null,
  h bigint not null,
  i string not null,
  k bigint not null,
  primary key (id)
);

-- §1's credit-card transactions: timestamp ts (seconds), account acc, amount amnt (whole currency
-- units). id is synthetic again: two transactions may agree on (ts, acc, amnt).
create table trans (
  id bigint not null,
  ts bigint not null,
  acc bigint not null,
  amnt bigint not null,
  primary key (id)
);
