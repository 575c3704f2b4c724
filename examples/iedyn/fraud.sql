-- IEDyn §1's credit-card fraud pattern: two small purchases on an account, then a large one,
-- all within one hour. The paper writes the window as `L.ts < S1.ts + 1h`; ts is in seconds here,
-- so the window is the offset inequality `l.ts < s1.ts + 3600` (a θ-predicate with a constant
-- offset, not an equality window). The paper's SELECT * keeps every column of the three rows.
-- The window closes a cycle of inequalities (s1.ts < s2.ts < l.ts < s1.ts + 3600, one on each pair
-- of atoms), so no generalized join tree exists: EXPLAIN names the witness and the fallback
-- maintains it.
select *
from trans s1, trans s2, trans l
where s1.ts < s2.ts and s2.ts < l.ts and l.ts < s1.ts + 3600
  and s1.acc = s2.acc and s2.acc = l.acc
  and s1.amnt < 100 and s2.amnt < 100 and l.amnt > 400
