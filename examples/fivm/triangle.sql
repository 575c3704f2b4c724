-- The triangle count Q() = Σ R(A,B)·S(B,C)·T(C,A) over one edge table read three times (catalog:
-- graph.sql). The query is cyclic, so no view tree maintains it in O(1); the planner chooses
-- heavy/light partitioning (IVM^ε, Olteanu §3.3): O(N^max(ε,1−ε)) amortized per update, O(√N) at
-- the default ε = ½ (--heavy-light-epsilon sets it; 1 is plain delta queries, O(N)).
select count(*) as triangles
from edges e1, edges e2, edges e3
where e1.dst = e2.src and e2.dst = e3.src and e3.dst = e1.src
