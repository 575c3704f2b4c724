-- IEDyn Table 1, Q9: π_{d,e,f,g,h,k}(Q6). Free-connex acyclic (IEDyn §6).
-- π keeps multiplicities (GMR semantics, IEDyn §2): a row appears as often as the join rows it
-- projects, so this is a plain SELECT of the columns, not SELECT DISTINCT.
select s.d, s.e, s.f, t.g, t.h, s.k
from r, s, t
where s.k = t.k and r.a < s.d and s.d < t.g
