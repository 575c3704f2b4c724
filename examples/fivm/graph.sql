-- A directed graph as one edge table (multigraph: a bag of edges, no key). The triangle count over
-- it is triangle.sql; streams with a hub of growing degree: planner/workloads/triangle.py.
create table edges (
  src int not null,
  dst int not null
);
